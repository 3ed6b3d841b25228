// Hand-written material: containers, orchestration, proxies, certificates, Linux, networking.
import { area, topic } from "./dsl.ts";

export default [
  area("kubernetes", "Kubernetes", "kubernetes", {
    bg: [
      "Kubernetes cluster notes for the {team} namespace",
      "How our k8s deployments are wired together",
      "Kubernetes operations checklist for the {env} cluster",
      "Things to check before shipping a new Kubernetes workload",
    ],
    facts: [
      "A Deployment manages ReplicaSets, which manage Pods; rolling updates replace pods a few at a time.",
      "[k8s-oomkilled] Memory limits are enforced by the kernel: a container over its limit is killed, not throttled.",
      "[k8s-pending-scheduling] CPU requests decide where a pod is scheduled; limits decide how much it may use.",
      "[k8s-readiness-probe] Readiness probes take a pod out of the Service endpoints; liveness probes restart it.",
      "`kubectl describe pod` shows events, which usually explain why a pod is not running.",
      "[k8s-dns-ndots] Pods resolve names through CoreDNS using the search domains in /etc/resolv.conf.",
      "[k8s-evicted-disk] The kubelet evicts pods when a node runs short of memory or disk.",
      "[k8s-configmap-reload] ConfigMaps mounted as environment variables are read once at container start.",
      "PodDisruptionBudgets keep a minimum number of replicas up during node drains.",
      "[k8s-hpa-not-scaling] The HorizontalPodAutoscaler needs the metrics API, usually provided by metrics-server.",
      "Namespaces are a naming boundary, not a security boundary, unless network policies and RBAC say so.",
      "[k8s-imagepullbackoff] Image pulls use the node's container runtime and the pod's imagePullSecrets.",
    ],
  }, [
    topic("k8s-crashloop", "pods debugging", {
      name: "CrashLoopBackOff",
      ti: [
        "Pod stuck in CrashLoopBackOff after the {service} deploy",
        "Debugging CrashLoopBackOff when the container exits immediately",
        "CrashLoopBackOff caused by a missing environment variable",
        "How to read logs of a crashing Kubernetes pod",
      ],
      sy: [
        "`kubectl get pods` showed the new pods in `CrashLoopBackOff` with {n} restarts and growing back-off.",
        "The container started and exited within a second, so `kubectl logs` showed nothing useful.",
        "After the rollout every replica of {service} was restarting in a loop.",
      ],
      ca: [
        "The app exited with code 1 because a required environment variable from a Secret was not mounted in the new namespace.",
        "The container's command pointed to a script that was not in the image after a Dockerfile change.",
        "The process crashed on start because it could not reach the database and did not retry.",
      ],
      fx: [
        "Read the previous container's output with `kubectl logs <pod> --previous`.",
        "Check `kubectl describe pod` for the exit code and the last state; 137 means it was killed, 1 means the app exited.",
        "Make startup failures log a clear message before exiting, and retry dependencies with backoff instead of crashing.",
      ],
      sn: ["kubectl get pods -n {team}\nNAME                      READY   STATUS             RESTARTS   AGE\n{service}-6d9c7f9b8-xk2lp   0/1     CrashLoopBackOff   7          12m", "kubectl logs {service}-6d9c7f9b8-xk2lp --previous"],
      gi: "CrashLoopBackOff: `kubectl logs --previous` and `describe pod` for the exit code; usually missing config or a bad command.",
    }),
    topic("k8s-oomkilled", "memory limits", {
      name: "OOMKilled containers",
      ti: [
        "Container OOMKilled with exit code 137 in Kubernetes",
        "Setting memory requests and limits after OOMKilled restarts",
        "Why the JVM pod keeps getting OOMKilled",
      ],
      sy: [
        "Pods restarted several times an hour; `kubectl describe` showed `Last State: Terminated, Reason: OOMKilled, Exit Code: 137`.",
        "Memory graphs showed the container hitting exactly its {n}Mi limit before each restart.",
      ],
      ca: [
        "The memory limit was lower than the application's real peak usage under load.",
        "The runtime sized its heap from the node's memory rather than the container limit, so it grew past the limit.",
        "A memory leak grew slowly until the cgroup limit was reached.",
      ],
      fx: [
        "Measure real peak usage and set the limit with headroom; set the request close to typical usage.",
        "Make the runtime container-aware, for example `-XX:MaxRAMPercentage=75` for the JVM or `--max-old-space-size` for Node.",
        "If usage grows without bound, take a heap profile instead of raising the limit again.",
      ],
      sn: ["resources:\n  requests:\n    memory: 512Mi\n    cpu: 250m\n  limits:\n    memory: 1Gi"],
      gi: "OOMKilled / exit 137: limit below real peak or heap not container-aware; size limits from measurements.",
    }),
    topic("k8s-imagepullbackoff", "images registry", {
      name: "ImagePullBackOff",
      ti: [
        "ImagePullBackOff from the private container registry",
        "ErrImagePull: pull access denied for our image",
        "Fixing imagePullSecrets for a new namespace",
      ],
      sy: [
        "Pods stayed in `ImagePullBackOff`; events said `Failed to pull image ... pull access denied, repository does not exist or may require authorization`.",
        "A deploy hung with `ErrImagePull` and `manifest unknown` for the tag we had just pushed.",
      ],
      ca: [
        "The new namespace had no imagePullSecret for the private registry.",
        "The CI job pushed the image with a different tag than the one in the manifest.",
        "The image was built only for arm64 and the nodes were amd64.",
      ],
      fx: [
        "Create the registry secret in the namespace and reference it in `imagePullSecrets` or the service account.",
        "Check the exact tag with `docker manifest inspect` before deploying.",
        "Build multi-arch images with buildx when clusters mix architectures.",
      ],
      gi: "ImagePullBackOff: missing imagePullSecret in the namespace, wrong tag, or wrong architecture.",
    }),
    topic("k8s-pending-scheduling", "scheduling resources", {
      name: "pods stuck Pending",
      ti: [
        "Pods stuck in Pending with Insufficient cpu",
        "0/5 nodes are available: insufficient memory",
        "Pending pods because of node affinity and taints",
      ],
      sy: [
        "New replicas stayed `Pending` and the event said `0/{n} nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint`.",
        "The autoscaler did not add nodes even though pods were pending for twenty minutes.",
      ],
      ca: [
        "CPU requests were set far above real usage, so the scheduler thought nodes were full while they were mostly idle.",
        "The pods required a node label that only the GPU pool had.",
        "The node group had reached its maximum size in the cluster autoscaler.",
      ],
      fx: [
        "Right-size requests from actual usage (`kubectl top pods`) instead of guessing.",
        "Check taints, tolerations and affinity rules in the pod spec against the node labels.",
        "Raise the node group's maximum or add a pool that matches the pods' requirements.",
      ],
      gi: "Pods Pending with `Insufficient cpu`: requests too high, taints/affinity mismatch, or node group at max.",
    }),
    topic("k8s-readiness-probe", "probes health-checks", {
      name: "failing readiness probes",
      ti: [
        "Readiness probe failed: connection refused during startup",
        "Liveness probe restarting pods under load",
        "Tuning probes so slow starts do not cause restarts",
      ],
      sy: [
        "Events showed `Readiness probe failed: Get \"http://10.2.3.4:8080/healthz\": dial tcp 10.2.3.4:8080: connect: connection refused` for the first minute.",
        "Under heavy load pods were restarted because the liveness probe timed out after one second.",
      ],
      ca: [
        "The app needed {n} seconds to warm its caches but the liveness probe started checking after 10.",
        "The liveness endpoint checked the database, so a database blip restarted every pod at once.",
      ],
      fx: [
        "Use a startupProbe for slow starts instead of a long initialDelaySeconds on the liveness probe.",
        "Keep liveness checks local to the process; put dependency checks in readiness only.",
        "Raise `timeoutSeconds` and `failureThreshold` so one slow response does not restart a pod.",
      ],
      sn: ["startupProbe:\n  httpGet: { path: /healthz, port: 8080 }\n  failureThreshold: 30\n  periodSeconds: 2"],
      gi: "Probe failures restarting pods: startupProbe for slow starts, liveness must not check dependencies.",
    }),
    topic("k8s-dns-ndots", "dns latency", {
      name: "ndots DNS lookups",
      ti: [
        "Slow external DNS lookups from pods because of ndots 5",
        "CoreDNS overloaded by search domain queries",
        "Intermittent DNS timeouts inside the Kubernetes cluster",
      ],
      sy: [
        "Calls to an external API from pods took an extra {n} ms, all spent in name resolution.",
        "CoreDNS logs were full of NXDOMAIN answers for names like `api.example.com.{team}.svc.cluster.local`.",
        "Roughly one request in a thousand failed with `getaddrinfo EAI_AGAIN`.",
      ],
      ca: [
        "With the default `ndots:5`, every name with fewer than five dots is tried against each search domain first, so one lookup becomes four or five queries.",
        "Conntrack races on UDP made some parallel A and AAAA queries get dropped.",
      ],
      fx: [
        "Use fully qualified names with a trailing dot for external hosts, or set `dnsConfig.options ndots: 2` on the pod.",
        "Run NodeLocal DNSCache to cut latency and avoid the conntrack race.",
        "Add `single-request-reopen` on glibc-based images if the race persists.",
      ],
      gi: "Slow/flaky DNS in pods: ndots:5 multiplies queries; use FQDNs with a dot or lower ndots, NodeLocal DNSCache.",
    }),
    topic("k8s-evicted-disk", "eviction disk", {
      name: "pod evictions under disk pressure",
      ti: [
        "Pods evicted: the node was low on resource ephemeral-storage",
        "Hundreds of Evicted pods after a logging change",
        "DiskPressure taint on nodes filling with container logs",
      ],
      sy: [
        "`kubectl get pods` listed many pods with status `Evicted` and the message `The node was low on resource: ephemeral-storage`.",
        "Nodes got the `node.kubernetes.io/disk-pressure` taint and new pods could not be scheduled.",
      ],
      ca: [
        "A debug flag made the app write several GB of logs to stdout per hour, filling the node's disk.",
        "The app wrote temp files to its container filesystem instead of an emptyDir with a size limit.",
      ],
      fx: [
        "Set `ephemeral-storage` requests and limits so a single pod cannot fill the node.",
        "Use an emptyDir with `sizeLimit` for scratch files.",
        "Clean up evicted pods with `kubectl delete pods --field-selector=status.phase=Failed`.",
      ],
      gi: "Evicted pods / DiskPressure: logs or temp files filled the node; ephemeral-storage limits, emptyDir sizeLimit.",
    }),
    topic("k8s-hpa-not-scaling", "autoscaling metrics", {
      name: "HPA not scaling",
      ti: [
        "HorizontalPodAutoscaler shows unknown targets and never scales",
        "HPA stuck at minimum replicas under heavy load",
        "Autoscaling on CPU did nothing for our queue workers",
      ],
      sy: [
        "`kubectl get hpa` showed `TARGETS: <unknown>/70%` and the replica count never changed.",
        "The HPA stayed at {n} replicas while request latency climbed.",
      ],
      ca: [
        "metrics-server was not installed, so the HPA had no CPU metrics.",
        "The pods had no CPU requests; utilization is a percentage of the request, so it could not be computed.",
        "The workers were I/O bound, so CPU never reached the target even with a long queue.",
      ],
      fx: [
        "Install metrics-server and check `kubectl top pods` works.",
        "Set CPU requests on every container the HPA targets.",
        "Scale queue workers on queue length with an external metric (for example KEDA) instead of CPU.",
      ],
      gi: "HPA `<unknown>` targets: install metrics-server, set CPU requests; scale queue workers on queue depth.",
    }),
    topic("k8s-configmap-reload", "config deployments", {
      name: "ConfigMap changes not picked up",
      ti: [
        "Pods do not see updated ConfigMap values",
        "Rolling restart after changing a Kubernetes ConfigMap",
        "Config change applied but the app kept old settings",
      ],
      sy: [
        "We changed a value in the ConfigMap and `kubectl apply` succeeded, but the running app still used the old value.",
      ],
      ca: [
        "Values injected as environment variables are read only when the container starts.",
        "Files from a ConfigMap mounted with subPath are never updated.",
      ],
      fx: [
        "Run `kubectl rollout restart deployment/{service}` after changing the ConfigMap.",
        "Put a hash of the config in a pod template annotation so a config change triggers a rollout automatically.",
        "Mount the ConfigMap as a directory (not subPath) if the app can reload files itself.",
      ],
      gi: "ConfigMap change not visible: env vars read at start; rollout restart or hash annotation; avoid subPath.",
    }),
  ]),

  area("docker", "Docker", "docker", {
    bg: ["Dockerfile conventions for {team} services", "Container image notes for the {service} build", "Docker tips collected from the last few incidents"],
    facts: [
      "Each instruction in a Dockerfile creates a layer; a changed layer invalidates every layer after it.",
      "[docker-layer-cache] Copying dependency manifests before the source code keeps the dependency install cached.",
      "[docker-multistage] Multi-stage builds keep compilers and build caches out of the final image.",
      "[docker-volume-permissions] Containers run as root unless the image or the runtime says otherwise.",
      "[docker-compose-localhost] In Compose, services reach each other by service name on a shared network.",
      "A .dockerignore file keeps node_modules, .git and build output out of the build context.",
      "[docker-disk-space] Old images, stopped containers and build cache accumulate until pruned.",
      "Distroless and slim base images cut image size and the number of packages to patch.",
    ],
  }, [
    topic("docker-layer-cache", "build ci", {
      name: "Docker layer cache invalidation",
      ti: [
        "Docker build reinstalls all dependencies on every commit",
        "Ordering Dockerfile steps so the layer cache works",
        "Speeding up CI image builds with BuildKit cache mounts",
      ],
      sy: [
        "Every CI build spent {n} minutes in `npm ci` even when only a README changed.",
        "The build log showed no `CACHED` steps after the COPY line.",
      ],
      ca: [
        "The Dockerfile ran `COPY . .` before installing dependencies, so any file change invalidated the install layer.",
        "CI runners were fresh machines with no local layer cache.",
      ],
      fx: [
        "Copy only the lockfile first, install dependencies, then copy the rest of the source.",
        "Use `--cache-from` with a registry cache or `type=gha` cache in CI.",
        "Use `RUN --mount=type=cache,target=/root/.npm` so package downloads survive across builds.",
      ],
      sn: ["COPY package.json package-lock.json ./\nRUN --mount=type=cache,target=/root/.npm npm ci\nCOPY . ."],
      gi: "Docker rebuilds deps every time: copy lockfile first, then install, then source; cache-from in CI.",
    }),
    topic("docker-disk-space", "disk cleanup", {
      name: "Docker filling the disk",
      ti: [
        "no space left on device during docker build",
        "Reclaiming disk space used by Docker images and build cache",
        "CI runner disk full of dangling Docker layers",
      ],
      sy: [
        "Builds failed with `failed to register layer: write /var/lib/docker/...: no space left on device`.",
        "`/var/lib/docker` had grown to {n} GB on the build host.",
      ],
      ca: [
        "Nobody pruned old images and the BuildKit cache on the self-hosted runner.",
        "Containers wrote logs with the json-file driver and no rotation.",
      ],
      fx: [
        "Check usage with `docker system df` and clean up with `docker system prune -af` and `docker builder prune`.",
        "Configure log rotation: `\"log-opts\": {\"max-size\": \"10m\", \"max-file\": \"3\"}` in daemon.json.",
        "Schedule pruning on CI runners.",
      ],
      sn: ["docker system df\ndocker builder prune --filter until=72h -f"],
      gi: "`no space left on device` in Docker: docker system df, prune images and builder cache, rotate json logs.",
    }),
    topic("docker-volume-permissions", "permissions volumes", {
      name: "volume permission errors",
      ti: [
        "Permission denied writing to a Docker bind mount",
        "UID mismatch between container user and host volume",
        "Running containers as non-root broke the data directory",
      ],
      sy: [
        "The container logged `EACCES: permission denied, open '/data/app.db'` after we switched to a non-root user.",
        "Files created by the container on the host were owned by root and the developer could not delete them.",
      ],
      ca: [
        "The container user (uid 1000) did not own the bind-mounted host directory.",
        "The named volume was created by an earlier root container, so its files belonged to root.",
      ],
      fx: [
        "Create the directory with the right owner in the Dockerfile (`chown`) or match the host uid with `--user $(id -u):$(id -g)`.",
        "For named volumes, fix ownership once with a short init container or entrypoint step.",
      ],
      gi: "Permission denied on Docker volume: container uid does not own the mount; chown or run with host uid.",
    }),
    topic("docker-compose-localhost", "compose networking", {
      name: "localhost inside Compose",
      ti: [
        "Connection refused to localhost between Docker Compose services",
        "App container cannot reach the database at 127.0.0.1",
        "Service discovery by name in docker compose",
      ],
      sy: [
        "The API container failed with `connect ECONNREFUSED 127.0.0.1:5432` although `docker compose ps` showed Postgres running.",
        "The app started before the database was ready and crashed on the first query.",
      ],
      ca: [
        "Inside a container, localhost is the container itself, not the host or other services.",
        "`depends_on` only orders start-up; it does not wait for the service to accept connections.",
      ],
      fx: [
        "Use the service name as the host name, for example `postgres://db:5432/app`.",
        "Add a healthcheck to the database service and use `depends_on: condition: service_healthy`.",
      ],
      sn: ["services:\n  db:\n    image: postgres:16\n    healthcheck:\n      test: [\"CMD\", \"pg_isready\"]\n  api:\n    depends_on:\n      db: { condition: service_healthy }"],
      gi: "ECONNREFUSED 127.0.0.1 in Compose: use the service name as host; healthcheck + service_healthy.",
    }),
    topic("docker-multiarch", "buildx arm64", {
      name: "exec format error",
      ti: [
        "exec format error when running an image on arm64",
        "Building multi-arch images with docker buildx",
        "Image built on an M1 laptop fails in production",
      ],
      sy: [
        "The container exited at once with `exec /usr/local/bin/app: exec format error`.",
        "Pods on the new Graviton nodes crashed while the same image worked on the old ones.",
      ],
      ca: [
        "The image was built for a single architecture (amd64 or arm64) and run on the other.",
      ],
      fx: [
        "Build with `docker buildx build --platform linux/amd64,linux/arm64 --push`.",
        "Check an image's platforms with `docker manifest inspect` or `docker buildx imagetools inspect`.",
      ],
      gi: "`exec format error`: image built for the wrong CPU architecture; buildx --platform amd64,arm64.",
    }),
    topic("docker-multistage", "images size", {
      name: "oversized images",
      ti: [
        "Cutting a 2 GB image down with multi-stage builds",
        "Why our Docker image ships the whole toolchain",
        "Slim runtime images for compiled services",
      ],
      sy: ["The service image was {n} MB and pulls slowed down every deploy.", "A vulnerability scan flagged hundreds of packages we never use at run time."],
      ca: ["The final image was built from the full SDK image with compilers, caches and dev dependencies."],
      fx: ["Build in one stage and `COPY --from=build` only the binary or dist folder into a slim or distroless stage.", "Install production dependencies only in the runtime stage."],
      sn: ["FROM golang:1.22 AS build\nRUN go build -o /out/app ./cmd/app\nFROM gcr.io/distroless/static\nCOPY --from=build /out/app /app"],
      gi: "Huge images: multi-stage build, copy only the artifact into a slim/distroless runtime stage.",
    }),
  ]),

  area("nginx", "nginx and reverse proxies", "nginx", {
    bg: ["nginx configuration notes for the edge proxy", "Reverse proxy setup in front of {service}", "What our nginx config does and why"],
    facts: [
      "nginx buffers upstream responses by default; proxy_buffering off streams them as they arrive.",
      "[nginx-502-upstream] `proxy_pass` to a hostname is resolved once at start unless a resolver and a variable are used.",
      "[nginx-413] client_max_body_size defaults to 1 MB.",
      "[nginx-websocket] WebSocket proxying needs the Upgrade and Connection headers passed explicitly.",
      "`nginx -t` checks the configuration before a reload.",
      "[nginx-real-ip] Behind a load balancer, the client address is in X-Forwarded-For, not in the TCP peer address.",
      "Keepalive connections to upstreams need `proxy_http_version 1.1` and an empty Connection header.",
    ],
  }, [
    topic("nginx-502-upstream", "proxy errors", {
      name: "502 Bad Gateway from nginx",
      ti: [
        "nginx 502 Bad Gateway: upstream prematurely closed connection",
        "Intermittent 502s from the proxy after app deploys",
        "connect() failed (111: Connection refused) while connecting to upstream",
      ],
      sy: [
        "Clients got `502 Bad Gateway` for a few seconds on every deploy.",
        "The error log said `upstream prematurely closed connection while reading response header from upstream`.",
        "nginx logged `connect() failed (111: Connection refused) while connecting to upstream` even though the app was up.",
      ],
      ca: [
        "The app's keep-alive timeout was shorter than nginx's, so nginx reused a connection the app had just closed.",
        "The upstream hostname was resolved once at start; after the app moved, nginx kept the old IP.",
        "Old app instances were killed before nginx stopped sending them traffic.",
      ],
      fx: [
        "Make the app's keep-alive timeout longer than nginx's `keepalive_timeout` to the upstream.",
        "Use `resolver` with a variable in `proxy_pass` so DNS changes are picked up.",
        "Drain connections on shutdown: stop accepting, wait, then exit.",
        "Enable `proxy_next_upstream error timeout` for idempotent requests.",
      ],
      gi: "nginx 502 / upstream prematurely closed: app keep-alive shorter than proxy's, stale DNS, no graceful drain.",
    }),
    topic("nginx-413", "uploads limits", {
      name: "413 Request Entity Too Large",
      ti: ["413 Request Entity Too Large on file uploads", "Raising client_max_body_size for the upload endpoint", "Uploads over 1 MB rejected by nginx"],
      sy: ["Uploads over one megabyte failed with `413 Request Entity Too Large` from nginx before reaching the app.", "The error log said `client intended to send too large body: {n} bytes`."],
      ca: ["nginx's `client_max_body_size` defaults to 1m."],
      fx: ["Set `client_max_body_size 50m;` in the location block for the upload route only.", "Keep the app's own limit in line so the error message is consistent."],
      gi: "413 Request Entity Too Large: nginx client_max_body_size (default 1m) on the upload location.",
    }),
    topic("nginx-websocket", "websockets proxy", {
      name: "WebSocket upgrade through nginx",
      ti: ["WebSocket connection failed through the nginx proxy", "Proxying WebSocket upgrade headers in nginx", "Websockets closing after sixty seconds behind nginx"],
      sy: ["The browser console said `WebSocket connection to 'wss://...' failed: Error during WebSocket handshake: Unexpected response code: 400`.", "Idle WebSocket connections dropped after exactly 60 seconds."],
      ca: ["nginx does not forward the hop-by-hop Upgrade and Connection headers unless told to.", "proxy_read_timeout (60s) closed idle connections."],
      fx: ["Add `proxy_http_version 1.1; proxy_set_header Upgrade $http_upgrade; proxy_set_header Connection \"upgrade\";`.", "Raise `proxy_read_timeout` or send pings more often than the timeout."],
      gi: "WebSocket 400 / drops at 60s behind nginx: pass Upgrade/Connection headers, raise proxy_read_timeout or ping.",
    }),
    topic("nginx-sse-buffering", "streaming sse", {
      name: "buffered server-sent events",
      ti: ["Server-sent events arrive all at once behind nginx", "Disabling proxy buffering for streaming responses", "Streaming LLM tokens through a reverse proxy"],
      sy: ["Streamed responses arrived in one chunk at the end instead of token by token.", "The event stream worked locally but not through the proxy."],
      ca: ["nginx buffered the upstream response before sending it to the client."],
      fx: ["Send `X-Accel-Buffering: no` from the app or set `proxy_buffering off` for the streaming location.", "Also disable gzip for text/event-stream, which buffers too."],
      gi: "SSE/streaming arrives all at once: nginx proxy buffering; X-Accel-Buffering: no or proxy_buffering off.",
    }),
    topic("nginx-real-ip", "proxy headers", {
      name: "client IP behind proxies",
      ti: ["All requests appear to come from the load balancer IP", "Trusting X-Forwarded-For only from our proxies", "Rate limiting by client IP behind nginx"],
      sy: ["Access logs and rate limits saw every request as coming from 10.0.0.2, the load balancer.", "One abusive client got everyone rate limited because all traffic shared one address."],
      ca: ["The app used the TCP peer address, which is the proxy's."],
      fx: ["Use `set_real_ip_from` with the proxy ranges and `real_ip_header X-Forwarded-For` in nginx.", "In the app, trust X-Forwarded-For only when the peer is a known proxy, and take the right-most untrusted address."],
      gi: "Every client has the LB's IP: real_ip module / trusted X-Forwarded-For from known proxies only.",
    }),
  ]),

  area("tls", "TLS and certificates", "tls", {
    bg: ["Certificate management notes for our domains", "TLS setup for internal services", "How certificates are issued and renewed here"],
    facts: [
      "Let's Encrypt certificates are valid for 90 days; renew at 60.",
      "[tls-chain-incomplete] Servers must send the intermediate certificates; browsers may cope without them, other clients usually do not.",
      "[tls-sni-hostname] The certificate must list the host name in its Subject Alternative Names; the Common Name is ignored by modern clients.",
      "`openssl s_client -connect host:443 -servername host -showcerts` prints what a server really sends.",
      "[tls-mtls] Mutual TLS authenticates the client with its own certificate.",
      "[tls-cert-expired] Certificate expiry should be monitored from outside, like a client would see it.",
    ],
  }, [
    topic("tls-cert-expired", "certificates letsencrypt", {
      name: "expired certificates",
      ti: ["Certificate expired and certbot renewal silently failed", "x509: certificate has expired or is not yet valid", "Monitoring TLS certificate expiry before it bites"],
      sy: ["Clients failed with `x509: certificate has expired or is not yet valid` on Monday morning.", "Browsers showed NET::ERR_CERT_DATE_INVALID for the status page."],
      ca: ["The certbot renewal timer ran but the HTTP-01 challenge failed because a redirect rule blocked `/.well-known/acme-challenge/`.", "The certificate was renewed on disk but nginx was never reloaded, so it kept serving the old one."],
      fx: ["Test renewal with `certbot renew --dry-run` and add a deploy hook that reloads nginx.", "Alert when a served certificate has fewer than 14 days left, checked from outside.", "Exempt the ACME challenge path from redirects."],
      sn: ["certbot renew --dry-run --deploy-hook \"systemctl reload nginx\""],
      gi: "Expired cert: certbot renewal failed or nginx not reloaded; dry-run renew, deploy hook, external expiry alert.",
    }),
    topic("tls-chain-incomplete", "certificates chain", {
      name: "incomplete certificate chain",
      ti: ["unable to get local issuer certificate from curl and Node", "Incomplete TLS chain works in Chrome but fails in scripts", "Serving the full chain instead of the leaf certificate"],
      sy: ["curl failed with `SSL certificate problem: unable to get local issuer certificate` while the browser was happy.", "Node clients got `UNABLE_TO_VERIFY_LEAF_SIGNATURE`."],
      ca: ["The server was configured with the leaf certificate only, without the intermediate.", "The client ran in a container image with no CA bundle installed."],
      fx: ["Serve `fullchain.pem`, not `cert.pem`.", "Install ca-certificates in slim images.", "For a private CA, pass it explicitly (`NODE_EXTRA_CA_CERTS`, `--cacert`) rather than disabling verification."],
      gi: "`unable to get local issuer certificate`: serve fullchain.pem, install ca-certificates, never disable verification.",
    }),
    topic("tls-sni-hostname", "certificates hostname", {
      name: "hostname mismatch",
      ti: ["Hostname mismatch: certificate is not valid for this name", "SNI missing when connecting by IP address", "ERR_CERT_COMMON_NAME_INVALID on the new subdomain"],
      sy: ["The client failed with `Hostname/IP does not match certificate's altnames`.", "Connecting to the load balancer by IP returned the default certificate."],
      ca: ["The new subdomain was not in the certificate's Subject Alternative Names.", "Without SNI the server could not tell which certificate to present."],
      fx: ["Reissue the certificate with every served name in the SAN list, or use a wildcard.", "Connect by host name so SNI is sent; with openssl pass `-servername`."],
      gi: "Hostname mismatch: name missing from SAN list or no SNI (connecting by IP).",
    }),
    topic("tls-mtls", "mtls security", {
      name: "mutual TLS setup",
      ti: ["Setting up mutual TLS between internal services", "tls: bad certificate with client certificates", "Rotating client certificates without downtime"],
      sy: ["Handshakes failed with `remote error: tls: bad certificate` after enabling client certificate checks."],
      ca: ["The server's client CA bundle did not include the CA that signed the new client certificates.", "The client certificate lacked the clientAuth extended key usage."],
      fx: ["Put both old and new CAs in the trust bundle during rotation.", "Issue client certificates with `extendedKeyUsage = clientAuth`."],
      gi: "mTLS `bad certificate`: client CA missing from server bundle or cert lacks clientAuth EKU.",
    }),
  ]),

  area("linux", "Linux and systemd", "linux", {
    bg: ["Linux host notes for the {env} machines", "systemd and host configuration conventions", "Runbook basics for our Linux servers"],
    facts: [
      "systemd units restart according to Restart= and are rate limited by StartLimitBurst and StartLimitIntervalSec.",
      "[linux-too-many-open-files] Each process has a limit on open file descriptors; sockets count too.",
      "[linux-oom-killer] The kernel OOM killer picks a victim by oom_score when memory runs out.",
      "[linux-journald-disk] journald keeps logs in /var/log/journal when persistent storage is enabled.",
      "`ss -tanp` shows sockets with their state and owning process.",
      "[linux-inodes-full] A filesystem can run out of inodes while `df -h` still shows free space.",
      "[linux-cron-env] cron runs jobs with a minimal environment and /bin/sh.",
      "Use `systemd-analyze blame` to see what slows boot.",
    ],
  }, [
    topic("linux-too-many-open-files", "ulimit file-descriptors", {
      name: "too many open files",
      ti: [
        "EMFILE: too many open files under load",
        "Raising the file descriptor limit for a systemd service",
        "Too many open files: ulimit set but not applied",
        "Socket leak exhausting file descriptors in {service}",
      ],
      sy: [
        "Under load the service logged `accept: too many open files` and stopped accepting connections.",
        "Node threw `Error: EMFILE: too many open files, open '/srv/app/config.json'`.",
        "`ls /proc/<pid>/fd | wc -l` showed exactly 1024 descriptors.",
      ],
      ca: [
        "The service ran under systemd, which ignores /etc/security/limits.conf; the default soft limit was 1024.",
        "HTTP client connections were never closed, leaking a socket per request.",
      ],
      fx: [
        "Set `LimitNOFILE=65536` in the unit file and restart; check with `cat /proc/<pid>/limits`.",
        "Find the leak with `lsof -p <pid>` grouped by type and fix the code that forgets to close.",
        "Reuse HTTP connections through one keep-alive agent instead of creating a client per request.",
      ],
      sn: ["[Service]\nLimitNOFILE=65536", "lsof -p 4242 | awk '{print $5}' | sort | uniq -c | sort -rn | head"],
      gi: "EMFILE / too many open files: LimitNOFILE in the systemd unit (limits.conf is ignored), check for socket leaks.",
    }),
    topic("linux-systemd-restart-loop", "systemd services", {
      name: "systemd start-limit",
      ti: [
        "systemd service stuck: start request repeated too quickly",
        "Unit entered failed state after restart loop",
        "Debugging a systemd service that exits right after starting",
      ],
      sy: [
        "`systemctl status app` said `Start request repeated too quickly` and `Failed with result 'exit-code'`.",
        "The service stayed down after a config typo even though Restart=always was set.",
      ],
      ca: [
        "systemd gave up after StartLimitBurst restarts within StartLimitIntervalSec.",
        "The unit used Type=forking for a process that does not fork, so systemd thought it had died.",
      ],
      fx: [
        "Read the real error with `journalctl -u app -b --no-pager | tail -50`.",
        "After fixing, clear the counter with `systemctl reset-failed app`.",
        "Use Type=simple or Type=notify for services that stay in the foreground, and set RestartSec=2.",
      ],
      gi: "`start request repeated too quickly`: read journalctl -u, fix, systemctl reset-failed; check Type=.",
    }),
    topic("linux-oom-killer", "memory kernel", {
      name: "kernel OOM killer",
      ti: [
        "Process killed by the Linux OOM killer at night",
        "Out of memory: Killed process in dmesg",
        "Finding which process the kernel OOM killer chose",
      ],
      sy: [
        "The worker vanished without a log line; `dmesg` had `Out of memory: Killed process 2311 (python3) total-vm:...`.",
        "`journalctl -k` showed `oom-kill:constraint=CONSTRAINT_NONE` around the time of the crash.",
      ],
      ca: [
        "A nightly report loaded the whole table into memory.",
        "There was no swap and the box ran several memory-hungry services.",
      ],
      fx: [
        "Check `dmesg -T | grep -i oom` after unexplained deaths.",
        "Set MemoryMax= on the unit so one service cannot starve the rest, and stream large results instead of loading them.",
        "Protect critical daemons with `OOMScoreAdjust=-500`.",
      ],
      gi: "Process vanished: dmesg `Out of memory: Killed process`; stream data, MemoryMax=, OOMScoreAdjust.",
    }),
    topic("linux-journald-disk", "logging disk", {
      name: "journald disk usage",
      ti: ["journald logs using 4 GB of disk space", "Limiting systemd journal size with SystemMaxUse", "Vacuuming old journal files on small VMs"],
      sy: ["/var/log/journal used {n} GB on a 20 GB root disk.", "`journalctl --disk-usage` reported several gigabytes of archived journals."],
      ca: ["journald's default cap is 10% of the filesystem, and a chatty service logged at debug level."],
      fx: ["Set `SystemMaxUse=500M` in /etc/systemd/journald.conf and restart systemd-journald.", "Free space now with `journalctl --vacuum-size=500M`."],
      gi: "journald eating disk: SystemMaxUse in journald.conf, journalctl --vacuum-size.",
    }),
    topic("linux-inodes-full", "disk filesystem", {
      name: "inode exhaustion",
      ti: ["No space left on device but df shows free space", "Running out of inodes on the build server", "Millions of tiny session files exhausted inodes"],
      sy: ["Writes failed with `No space left on device` while `df -h` said 40% free.", "`df -i` showed IUse% at 100%."],
      ca: ["An app wrote one small file per session or cache entry and never cleaned them up."],
      fx: ["Check `df -i`, find the directory with `du --inodes -x / | sort -n | tail`, and delete old files.", "Move small-object storage to a database or clean it with a timer."],
      gi: "ENOSPC with free space: inodes exhausted (df -i); find and delete millions of small files.",
    }),
    topic("linux-cron-env", "cron scheduling", {
      name: "cron environment differences",
      ti: ["Script works in the shell but fails from cron", "command not found only when run by cron", "Cron jobs missing PATH and environment variables"],
      sy: ["The backup script ran fine by hand but cron mailed `pg_dump: command not found`.", "The cron job silently did nothing; there was no output anywhere."],
      ca: ["cron runs with a minimal PATH (/usr/bin:/bin) and none of the login shell's variables.", "`%` in a crontab line is treated as a newline unless escaped."],
      fx: ["Use absolute paths or set PATH at the top of the crontab.", "Redirect output to a log file (`>> /var/log/job.log 2>&1`).", "Consider a systemd timer, which logs to the journal and can run missed jobs."],
      gi: "Works in shell, fails in cron: minimal PATH/env, escape %, log output; or use a systemd timer.",
    }),
  ]),

  area("networking", "Networking and DNS", "networking", {
    bg: ["Network troubleshooting notes for the {env} VPC", "How traffic flows from the internet to {service}", "Networking basics every on-call engineer needs"],
    facts: [
      "[net-connection-reset] A connection reset means the peer sent RST: it closed abruptly or never knew the connection.",
      "[net-ephemeral-ports] Outgoing connections use ephemeral ports; each closed connection sits in TIME_WAIT on the closing side.",
      "[net-mtu] Path MTU problems show up as hangs on large transfers while small requests work.",
      "`dig +trace` follows a DNS lookup from the root servers down.",
      "[net-dns-ttl] DNS answers are cached for their TTL by resolvers and often longer by clients.",
      "tcpdump with `-w` and Wireshark later beats guessing.",
    ],
  }, [
    topic("net-connection-reset", "tcp errors", {
      name: "connection reset by peer",
      ti: ["ECONNRESET: connection reset by peer on idle connections", "read: connection reset by peer behind the load balancer", "Random socket hang up errors from the HTTP client"],
      sy: ["About one request in {n} failed with `read ECONNRESET` or `socket hang up`, always on reused connections.", "The Go client logged `read tcp 10.0.4.7:53122->10.0.9.3:443: read: connection reset by peer`."],
      ca: ["The load balancer dropped idle connections after 60 seconds while the client pool kept them for 90.", "The server closed keep-alive connections at the same moment the client sent a new request on them."],
      fx: ["Set the client's idle timeout below the load balancer's and the server's.", "Retry idempotent requests once on a reset of a reused connection.", "Enable TCP keepalive probes for long-lived idle connections."],
      gi: "ECONNRESET / socket hang up on reused connections: client idle timeout longer than LB's; lower it, retry idempotent.",
    }),
    topic("net-ephemeral-ports", "tcp ports", {
      name: "ephemeral port exhaustion",
      ti: ["Cannot assign requested address: ephemeral port exhaustion", "Thousands of TIME_WAIT sockets on the API host", "Outbound connections failing under load with EADDRNOTAVAIL"],
      sy: ["Outbound calls failed with `connect: cannot assign requested address` (EADDRNOTAVAIL) at peak.", "`ss -s` reported {n} thousand sockets in TIME_WAIT."],
      ca: ["The service opened a new TCP connection for every outgoing request and closed it right away.", "All traffic went to one destination IP and port, so the four-tuple space was small."],
      fx: ["Reuse connections with a keep-alive pool.", "Widen `net.ipv4.ip_local_port_range` and enable `net.ipv4.tcp_tw_reuse` for outgoing connections."],
      gi: "`cannot assign requested address`: ephemeral ports used up by TIME_WAIT; keep-alive pools, wider port range.",
    }),
    topic("net-mtu", "mtu vpn", {
      name: "MTU black holes",
      ti: ["Large requests hang over the VPN while small ones work", "Path MTU discovery broken by blocked ICMP", "TLS handshake stalls through the tunnel"],
      sy: ["`curl` to the internal API hung after the TLS ClientHello when going through the VPN, but health checks passed.", "SSH logins worked but `git clone` stalled at a fixed point."],
      ca: ["The tunnel lowered the MTU, and a firewall dropped the ICMP 'fragmentation needed' messages."],
      fx: ["Clamp TCP MSS on the tunnel (`iptables ... --clamp-mss-to-pmtu`).", "Test with `ping -M do -s 1400 host` to find the working packet size."],
      gi: "Big transfers hang over VPN: MTU black hole, ICMP blocked; clamp MSS, test with ping -M do.",
    }),
    topic("net-dns-ttl", "dns caching", {
      name: "stale DNS after a cutover",
      ti: ["Traffic still hitting the old server after the DNS change", "Lowering DNS TTL before a migration", "Java caching DNS answers forever"],
      sy: ["Hours after switching the A record, some clients still connected to the old IP."],
      ca: ["The record had a TTL of 86400 seconds, so resolvers kept the old answer for a day.", "The JVM cached successful lookups indefinitely with a security manager present."],
      fx: ["Lower the TTL to 60 seconds a day before the cutover.", "Set `networkaddress.cache.ttl=60` for Java clients."],
      gi: "Clients on old IP after DNS change: lower TTL a day ahead; JVM DNS cache ttl.",
    }),
  ]),
];
