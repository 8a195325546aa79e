/**
 * Image references from values, one chain for every container of the chart (the named templates'
 * too, such as the bundled PostgreSQL's wait in the migration Job): `<registry>/<repository>:<tag>`,
 * each part the image's own value or the chart-wide one; `global.imageRegistry` (a parent chart's)
 * comes first, as in Bitnami's charts.
 */

/** Template text (with the chart's root as `.`) of the image of `.Values.<valuesKey>.image`. */
export function imageReference(valuesKey: string): string {
  const own = `.Values.${valuesKey}.image`;
  return `(printf "%s/%s:%s" ((.Values.global).imageRegistry | default ${own}.registry | default .Values.image.registry) ${own}.repository (${own}.tag | default .Values.image.tag | default .Chart.AppVersion))`;
}

/** Template text of its pull policy: its own, else `image.pullPolicy`. */
export function imagePullPolicy(valuesKey: string): string {
  return `(.Values.${valuesKey}.image.pullPolicy | default .Values.image.pullPolicy)`;
}
