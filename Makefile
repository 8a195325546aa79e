# Entry points of the repository. Every install step lives here or in scripts/.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Downloads and builds (Kafka jars, PostgreSQL binaries, Gitea, Kubernetes) are cached here.
export OBSERVATORY_CACHE ?= $(CURDIR)/.cache
NODE_STAMP := node_modules/.install-stamp
# Every suite runs on Node 24 LTS (scripts/lts-node.sh) and Kafka 4.x (devstack's default). The
# broker-facing suites run again on Kafka 3.9 (workspace:files, files or folders comma-separated),
# and the published forge client again on the oldest maintained Node line it supports (its engines;
# NODE_OLDEST_VERSION of scripts/versions.sh, the one file of pinned versions).
# Only the files that talk to the broker: the others would rerun the same code against nothing new.
KAFKA3_SUITES := @event-observatory/broker:test/ @event-observatory/ingest:test/outage.test.ts,test/secured.test.ts \
	@event-observatory/consumer:test/consumer.test.ts,test/process.test.ts,test/secured.test.ts \
	@event-observatory/controller:test/reconcile.test.ts,test/deletion.test.ts,test/kafka-handler.test.ts,test/tenancy.test.ts

.PHONY: help install build lint test test-phase-workspaces test-phase-cluster cluster-suites-once-built test-side-workspaces test-light-workspaces test-kafka3 test-forge test-faults test-cluster cluster-suites test-keda test-api-lines soak dev migrate bench cluster images chart audit demo

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

$(NODE_STAMP): package.json package-lock.json $(wildcard packages/*/package.json services/*/package.json e2e/package.json monitoring/package.json patches/*.patch)
	@# `npm install` of the locked versions (not `npm ci`, which would delete node_modules on each
	@# change of a manifest; the Dockerfile's clean build uses `npm ci`). Its postinstall applies
	@# patches/ (patch-package); a patched package is removed first so a changed patch applies to
	@# pristine files. It runs on the Node every suite runs on (the workspaces' `engines` ask for it).
	@for p in $(wildcard patches/*.patch); do n=$$(basename $$p .patch); n=$${n%+*}; rm -rf "node_modules/$${n//+//}"; done
	PATH="$$(./scripts/lts-node.sh):$$PATH" npm install --no-audit --no-fund
	@touch $@

install: $(NODE_STAMP) ## Install the npm workspace (only when the lock file changed)

# The checks after `tsc -b` are independent and each single-threaded: they run at once
# (scripts/concurrently.sh prints each one's output whole when it ends).
TYPE_CHECKS := 'npx tsc -p tsconfig.test.json' 'npx tsc -p scripts/tsconfig.json' 'npx tsc -p bench/tsconfig.json'
LINT_CHECKS := 'npx biome check .' 'node --import tsx scripts/check-imports.ts' './scripts/actionlint.sh'

build: install ## Type-check and compile every workspace (tsc -b), and type-check the tests, scripts and benchmarks
	npx tsc -b
	./scripts/concurrently.sh $(TYPE_CHECKS)

lint: install ## Lint and format-check the tree (biome), check the import arrows of DESIGN.md, lint the workflows (actionlint)
	./scripts/concurrently.sh $(LINT_CHECKS)

# `test` type-checks and lints at once (what `build` and `lint` run, after `tsc -b`), then runs in two
# phases:
# - the workspaces' suites (but SIDE_WORKSPACES' and LIGHT_WORKSPACES') in two streams side by side,
#   SECOND_STREAM_WORKSPACES' in the second (one stream left a third of the two cores idle: each
#   workspace's start, global setup and last file ran alone), and the tests of scripts/
#   (scripts/vitest.config.ts), then the fault suites (e2e/reliability/faults: a paced load, one file
#   after the other), and beside them the forge client (no Kafka; Node 24, then Node 22) and
#   LIGHT_WORKSPACES' suites when Gitea, the prebuild's last step, is built: the paced load leaves
#   about half of the two cores idle. On a cold machine Gitea's build (and Helm's, which the cdk8s
#   suites run) would take that half from the prebuild, which the cluster phase waits for, so these
#   run in phase two;
# - the cluster suites (e2e/cluster, waiting on the API server and rollouts) and beside them the rest:
#   the Kafka 3.9 reruns, the forge client and LIGHT_WORKSPACES' suites (if they have not run) and
#   SIDE_WORKSPACES' suites, these one file at a time (VITEST_MAX_WORKERS=1; the first phase runs two,
#   vitest.shared.ts).
# The phases never overlap: on 2 cores the cluster suites' rollouts beside the workspace suites kept
# pods from getting ready within Helm's wait and the workspace suites' seeding past their timeouts,
# and the fault suites measure recovery times against bounds. Each phase alone keeps the two cores
# busy.
# From the start, scripts/test/prebuild.sh builds what the cluster phase needs (the cluster, the
# images, the add-ons, Gitea) at the lowest CPU priority, in the time the first phase leaves idle; the
# cluster suites start once it has built the cluster and the images, the rest of the second phase at
# once (on a cold machine the Kafka 3.9 reruns, which mostly wait on the broker, fill the minutes it
# still compiles). Its priority (and that of the Docker daemon it may have started for the images, a
# process group of its own) is raised when the first phase ends. On a warm machine it has found
# everything in seconds, and scripts/test/cluster-early.sh starts the cluster and imports the images
# beside the fault suites (the cluster suites reuse it; the EXIT trap stops it); on a cold one the
# cluster suites start it themselves, and wait for the add-ons the prebuild is still building.
test: install ## Run every test of the repo on Node 24 (broker suites also on Kafka 3.9, forge-client also on Node 22)
	@tally=$$(mktemp); prebuilt=$$(mktemp); export TEST_TALLY_FILE=$$tally TEST_STARTED=$$(date +%s); \
	export PREBUILD_CLUSTER_READY=$$tally.cluster-ready CLUSTER_EARLY_PID=$$tally.cluster-pid OBSERVATORY_CLUSTER_PARENT=$$$$; \
	export BESIDE_FAULTS=$$(packages/forge-client/scripts/build-gitea.sh --built && echo test-forge test-light-workspaces); \
	setsid nice -n 19 ./scripts/test/prebuild.sh >$$prebuilt 2>&1 & export PREBUILD_PID=$$!; \
	trap 'kill -- -$$PREBUILD_PID 2>/dev/null; ./scripts/test/cluster-early.sh stop $$CLUSTER_EARLY_PID; rm -f $$tally $$tally.* $$prebuilt' EXIT; \
	trap 'exit 130' INT TERM HUP; \
	npx tsc -b && ./scripts/concurrently.sh $(TYPE_CHECKS) $(LINT_CHECKS) || exit 1; \
	status=0; $(MAKE) --no-print-directory test-phase-workspaces || status=1; \
	for g in $$PREBUILD_PID $$(cat /run/observatory-docker.pid 2>/dev/null); do renice -n 0 -g $$g >/dev/null 2>&1; done; \
	$(MAKE) --no-print-directory test-phase-cluster || status=1; \
	wait $$PREBUILD_PID || { echo "scripts/test/prebuild.sh failed:"; status=1; }; cat $$prebuilt; \
	echo "make test took $(elapsed) s"; \
	./scripts/test/summary.sh $$tally && exit $$status

# The phases of `test` and their parts (the variables come from it). Each part says when it starts, in
# seconds since `test` began. SIDE_WORKSPACES: a workspace run beside the cluster suites to even the
# second phase's two sides; LIGHT_WORKSPACES: the last of the list, under a minute together, run beside
# the fault suites on a warm machine (BESIDE_FAULTS), beside the cluster suites on a cold one.
SIDE_WORKSPACES := e2e
LIGHT_WORKSPACES := monitoring cdk8s
SECOND_STREAM_WORKSPACES := packages/store services/jobs services/search services/ingest
elapsed = $$(( $$(date +%s) - $${TEST_STARTED:-$$(date +%s)} ))
test-phase-workspaces:
	@lts=$$(./scripts/lts-node.sh) || exit 1; \
	echo "Every suite on Node $$($$lts/node --version), in two streams:"; \
	ws=''; second=''; for d in $$(node -p 'require("./package.json").workspaces.join(" ")'); do \
	  [ -f $$d/package.json ] && [ $$d != packages/forge-client ] && [[ " $(SIDE_WORKSPACES) $(LIGHT_WORKSPACES) " != *" $$d "* ]] || continue; \
	  if [[ " $(SECOND_STREAM_WORKSPACES) " == *" $$d "* ]]; then second+=" -w $$d"; else ws+=" -w $$d"; fi; done; \
	./scripts/concurrently.sh "PATH=$$lts:\$$PATH npm test $$ws --if-present" "PATH=$$lts:\$$PATH npm test $$second --if-present"; status=$$?; \
	echo "[$(elapsed) s] the tools' own tests (scripts/):"; \
	PATH="$$lts:$$PATH" npx vitest run --config scripts/vitest.config.ts || status=1; \
	if [ -n "$$BESIDE_FAULTS" ]; then \
	  ./scripts/concurrently.sh '$(MAKE) --no-print-directory test-faults' "$(MAKE) --no-print-directory -k $$BESIDE_FAULTS" \
	    './scripts/test/cluster-early.sh start "$$CLUSTER_EARLY_PID"' || status=1; \
	else $(MAKE) --no-print-directory test-faults || status=1; fi; exit $$status

test-phase-cluster:
	@echo "[$(elapsed) s] the cluster suites, and beside them the rest"; \
	side='test-kafka3 test-side-workspaces'; [ -n "$$BESIDE_FAULTS" ] || side='test-kafka3 test-forge test-side-workspaces test-light-workspaces'; \
	./scripts/concurrently.sh '$(MAKE) --no-print-directory cluster-suites-once-built' "$(MAKE) --no-print-directory -k $$side"

cluster-suites-once-built:
	@while [ -n "$$PREBUILD_CLUSTER_READY" ] && [ ! -e "$$PREBUILD_CLUSTER_READY" ] && kill -0 $$PREBUILD_PID 2>/dev/null; do sleep 5; done; \
	echo "[$(elapsed) s] the cluster suites:"; \
	$(MAKE) --no-print-directory cluster-suites

test-side-workspaces: WORKSPACES = $(SIDE_WORKSPACES)
test-light-workspaces: WORKSPACES = $(LIGHT_WORKSPACES)
test-side-workspaces test-light-workspaces:
	@echo "[$(elapsed) s] $(WORKSPACES) on Node 24:"; \
	PATH="$$(./scripts/lts-node.sh):$$PATH" VITEST_MAX_WORKERS=1 npm test $(foreach w,$(WORKSPACES),-w $(w)) --if-present

# Parts of `test` (TEST_TALLY_FILE comes from it): the cluster suites, the broker-facing suites again
# on Kafka 3.9, the forge client on Node 24 and again on NODE_OLDEST_VERSION, and the fault suites
# (one broker, then three).
test-kafka3:
	@lts=$$(./scripts/lts-node.sh) || exit 1; status=0; \
	for run in $(KAFKA3_SUITES); do \
	  echo "[$(elapsed) s] $${run%%:*} again on Kafka 3.9:"; \
	  PATH="$$lts:$$PATH" VITEST_MAX_WORKERS=1 OBSERVATORY_KAFKA_VERSION=3 npm test -w $${run%%:*} -- $$(echo $${run#*:} | tr , ' ') || status=1; \
	done; exit $$status

test-faults:
	@echo "[$(elapsed) s] The fault suites (one broker, then three):"; \
	PATH="$$(./scripts/lts-node.sh):$$PATH" npm run test:faults -w @event-observatory/e2e

# The two forge-client runs at once, each with a Gitea of its own: their files run one by one and
# mostly wait on Gitea.
test-forge:
	@lts=$$(./scripts/lts-node.sh) && oldest=$$(./scripts/lts-node.sh NODE_OLDEST_VERSION) || exit 1; \
	echo "[$(elapsed) s] forge-client on Node $$($$lts/node --version), and at once on Node $$($$oldest/node --version):"; \
	./scripts/concurrently.sh "PATH=$$lts:\$$PATH npm test -w @event-observatory/forge-client" \
	  "PATH=$$oldest:\$$PATH npm test -w @event-observatory/forge-client"

test-cluster: build ## Run only the cluster suites (e2e/cluster): a cluster of their own unless KUBECONFIG is set
	@$(MAKE) --no-print-directory cluster-suites

cluster-suites:
	PATH="$$(./scripts/lts-node.sh):$$PATH" npm run test:cluster -w @event-observatory/e2e

# Not in `test`: KEDA's cold build (scripts/cluster/keda.sh) takes about half an hour on 2 cores.
test-keda: build ## Run the KEDA cluster suite (e2e/cluster/keda.test.ts; part of soak): a cluster of its own unless KUBECONFIG is set
	PATH="$$(./scripts/lts-node.sh):$$PATH" npm run test:cluster-soak -w @event-observatory/e2e

test-api-lines: build ## Check the chart against the API server of each older supported Kubernetes line (K8S_OLDER_LINES; e2e/api-lines; part of soak): each built from source once
	PATH="$$(./scripts/lts-node.sh):$$PATH" npm run test:api-lines -w @event-observatory/e2e

soak: install ## Run the fault suites' long form on Node 24 (minutes per fault, about 30 min; e2e/reliability), then test-keda and test-api-lines
	@status=0; \
	PATH="$$(./scripts/lts-node.sh):$$PATH" FAULT_SOAK=1 FAULT_REPORT=$(CURDIR)/bench/results/soak.md npm run test:faults -w @event-observatory/e2e || status=1; \
	$(MAKE) --no-print-directory test-keda || status=1; \
	$(MAKE) --no-print-directory test-api-lines || status=1; exit $$status

dev: install ## Start Kafka, PostgreSQL and every service locally on Node 24; Ctrl-C stops all
	PATH="$$(./scripts/lts-node.sh):$$PATH" node --conditions=source --import tsx scripts/dev.ts

migrate: install ## Apply pending migrations to DATABASE_URL (default: the make dev database)
	@if [ -z "$$DATABASE_URL" ] && [ -f .dev/stack.env ]; then set -a; . .dev/stack.env; set +a; fi; \
	npm run migrate -w @event-observatory/store

# Each bench replaces its own section of bench/results/latest.md (bench/lib/report.ts).
bench: install ## Run the benchmarks on Node 24 (consume, hot path, rollup, search, search's reader check, kafkajs encoding); figures in bench/results/latest.md
	@export PATH="$$(./scripts/lts-node.sh):$$PATH"; set -e; \
	for b in consume/run hotpath/run rollup/run search/run search/auth kafkajs/encode; do \
	  node --conditions=source --import tsx bench/$$b.ts; done

cluster: ## Start a single-node Kubernetes in the foreground (writes .dev/kubeconfig); Ctrl-C stops it
	./scripts/cluster/up.sh

images: ## Build every component's image and load it into the running cluster's containerd
	./scripts/images/build.sh

demo: install ## Install the chart's evaluation profile (bundled Kafka and PostgreSQL) on the running cluster, helm test it, print its NOTES
	./scripts/demo.sh

audit: ## Advisory gate: no high/critical advisory in production deps (exit 2 when the registry cannot be asked)
	./scripts/audit-gate.sh

chart: install ## Regenerate the Helm chart charts/observatory from the cdk8s constructs (cdk8s/)
	npm run synth -w @event-observatory/cdk8s
