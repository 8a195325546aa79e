/** @jsxRuntime automatic @jsxImportSource hono/jsx */
/**
 * A dotted or slashed name (`com.example.payment.failed`, `urn:orders/eu`) that may wrap only after
 * its separators, never inside a word: the break opportunities are `<wbr>` after each `.`, `/` and
 * `:`. Text and copy-paste stay the name itself.
 */
export function DottedName(props: { name: string }) {
  const parts = props.name.split(/(?<=[./:])/);
  return (
    <>
      {parts.map((part, i) => (
        <>
          {part}
          {i < parts.length - 1 ? <wbr /> : null}
        </>
      ))}
    </>
  );
}
