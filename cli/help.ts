// `modeldock help [command]`.
import { EXIT_HELP } from './exit-codes.ts';

const CONNECTION = `Connection (every command):
  --url URL               the API, default $MODELDOCK_URL (e.g. http://127.0.0.1:8787)
  --key KEY               the tenant API key, default $MODELDOCK_KEY (prefer the variable:
                          a flag is visible to other users in the process list)
  --request-timeout DUR   deadline of each HTTP request (default 15s)`;

const WAIT = `  -w, --wait              wait, showing progress (a live line on a terminal, one line per stage otherwise)
  --timeout DUR           give up waiting after DUR (default 10m; exit code 6)
  --interval DUR          poll interval (default 1s)`;

const OUTPUT = `  -o, --output FORMAT     table (default), json or yaml`;

export const HELP: Record<string, string> = {
  main: `modeldock — run a model image on ModelDock and watch it come up

Usage: modeldock <command> [options]

Commands:
  submit    admit a model service (from flags or a YAML/JSON file), optionally --wait until ready
  get       one admission: state, startup timeline, endpoint, failures, autoscaling
  list      the tenant's admissions, newest first
  quota     the tenant's quota per resource, with a bar of used / hard
  queue     the tenant's queued admissions: position, id, amounts, estimated wait
  scale     change the replicas or the autoscaling of an admission, optionally --wait until settled
  delete    delete an admission, optionally --wait until its quota is released
  chat      send a message to a ready admission's model and stream the reply
  help      this text, or 'modeldock help <command>'

${CONNECTION}

Colours are off when the output is not a terminal or NO_COLOR is set.

${EXIT_HELP}`,
  submit: `Usage: modeldock submit [-f FILE] [--name NAME] [--image IMAGE] [options]

Admits a model service: charges the tenant quota for every resource at once, or refuses (exit 3).
  -f, --file FILE         spec as YAML or JSON (name, image, replicas, port, resources, env, args,
                          readinessPath); '-' reads standard input; flags below override it
  --name NAME             DNS-1123 name of the service
  --image IMAGE           container image
  --replicas N            pods (default 1)
  --cpu Q --memory Q --gpu N   per-replica resources (Kubernetes quantities: 500m, 2, 4Gi)
  --port P                port the model server listens on (default 8000)
  --env NAME=VALUE        environment variable (repeatable)
  --arg ARG               container argument (repeatable)
  --readiness-path PATH   readiness probe path (default /healthz)
  --idempotency-key KEY   retry a submit safely: the same key and spec return the same admission
  --queue                 when the quota is short, wait in the tenant's queue instead of a refusal
                          ("onShortQuota": "queue"): nothing is charged until it is admitted, in
                          FIFO order; still exit 3 when it exceeds the tenant's hard limits
  --queue-ttl SECONDS     with --queue: give up after SECONDS queued (1..604800); it expires,
                          never charged (default: it waits until admitted or deleted)
  --autoscale MIN:MAX:TARGET
                          scale on the pods' load between MIN and MAX replicas, TARGET requests
                          (waiting + being generated) per replica, e.g. 1:8:10; it starts at
                          --replicas (default MIN). Every scale-up is charged first: when the
                          quota is short it scales up less (QuotaLimited, see modeldock get)
${WAIT}
${OUTPUT}

With --wait the startup timeline is shown: admitted → delivered → scheduled → started → ready.
A queued admission first shows its live queue position and estimated wait ("position 2 · about
40 s", or why there is no estimate) until it is admitted; the --timeout covers the queue too.
Cancelled (deleted) or expired while queued ends the wait with exit 5. A stage the API does not
report is shown as such. On a failure the last pod failure is printed and the exit code is 5.

${CONNECTION}`,
  get: `Usage: modeldock get <id> [-o table|json|yaml]

An autoscaled admission also shows its range and target, the replicas the load asks for
(desired), those set and those charged, the autoscaler's last change and why, and its
conditions: QuotaLimited (the quota gave less than the load asks for), MetricsUnavailable (the
pods' load cannot be read: the replicas are held) and Panic (a burst: no scale-down).

${CONNECTION}`,
  list: `Usage: modeldock list [--limit N | --all] [-o table|json|yaml]

  --limit N               at most N admissions (1..100, default 20)
  --all                   every admission (follows the pages)
${OUTPUT}

${CONNECTION}`,
  quota: `Usage: modeldock quota [-o table|json|yaml]

USED is what is charged and not yet released (active + releasing + conflict).

${CONNECTION}`,
  queue: `Usage: modeldock queue [-o table|json|yaml]

The tenant's queued admissions (submit --queue) in the order they will be admitted: position
(1 = next), id, what each is charged once admitted, and the estimated wait, from the rate the
tenant's quota was released over the last minutes (or why there is none). A later, smaller
admission may pass one that does not fit yet, a bounded number of times. 'modeldock delete <id>'
cancels a queued one (nothing was charged).

${OUTPUT}

${CONNECTION}`,
  scale: `Usage: modeldock scale <id> <replicas> [--wait] [--idempotency-key KEY] [-o table|json|yaml]
       modeldock scale <id> [<replicas>] --autoscale MIN:MAX:TARGET|off [--wait] …

Changes the number of replicas. An increase is charged at once, all or nothing (exit 3 when
the quota is short: nothing changes); a decrease is refunded only once the surplus pods are
gone. One change at a time: while one is in flight the API refuses another (exit 9). With
--wait, shows applying → (awaitingScaleDown →) settled.
An admission that autoscales refuses a number of replicas alone (exit 9): change its range.
  --autoscale MIN:MAX:TARGET  autoscale between MIN and MAX replicas, TARGET requests per replica
                          (replaces the whole autoscaling spec); replicas outside the new range
                          move into it with this change
  --autoscale off         stop autoscaling: the replicas stay where they are (or at <replicas>)
  --idempotency-key KEY  reuse after a lost answer: the change is made once (default: a new key)
${WAIT}
${OUTPUT}

${CONNECTION}`,
  chat: `Usage: modeldock chat <id> [message…] [--model NAME] [--system TEXT] [--max-tokens N]

Sends one message to the admission's model through the API (POST /v1/models/<id>/chat/completions,
OpenAI-compatible) and prints the reply on stdout as it streams in, ending with a newline;
nothing else goes to stdout. Without a message after the id, the message is standard input,
read to its end (a pipe, or Ctrl-D on a terminal). A message that starts with '-' goes after '--'.
  --model NAME            the request's "model", passed to your server as is (default
                          $MODELDOCK_MODEL, else "default"; the mock model answers to "mock-model")
  --system TEXT           a system message before yours
  --max-tokens N          at most N tokens in the reply

--request-timeout bounds the wait for the reply to start, not the reply: Ctrl-C stops it (exit
130). A model that is not ready yet is exit 9 (model_not_ready: see modeldock get <id>); a reply
that breaks off is exit 8.

${CONNECTION}`,
  delete: `Usage: modeldock delete <id> [--wait] [-o table|json|yaml]

Deletes an admission; its quota is kept until every pod is gone. With --wait, shows
deleting → releasing → released, and ReleaseBlocked with the pods it waits for. A queued
admission is cancelled at once: it was never charged.
${WAIT}
${OUTPUT}

${CONNECTION}`,
};
