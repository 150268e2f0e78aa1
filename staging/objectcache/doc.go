// Package objectcache gives a node agent the ConfigMaps and Secrets its pods
// reference, while keeping the apiserver's load minimal and propagation
// fast.
//
// A manager is instantiated per kind (ConfigMaps(), Secrets()) with one of
// two strategies, both fed the same way: RegisterPod when a pod is added or
// updated, UnregisterPod when it is gone, Get(ctx, namespace, name) when a
// pod's sync needs an object. References are extracted from the pod
// (ConfigMapNames, SecretNames: env, envFrom, volumes, projected sources and,
// for Secrets, imagePullSecrets, across init, regular and ephemeral
// containers) and counted per pod: re-registering a changed pod adds and
// drops exactly the difference. Get refuses objects no registered pod
// references (ErrNotRegistered); the Node authorizer would refuse them too.
//
// The watching strategy (NewWatching) is the default choice. Each referenced
// object gets its own list and watch, selected by name, started with its
// first reference and stopped with its last, so a node watches exactly what
// its pods use and the apiserver pushes every change. An immutable object is
// listed once and never watched; a watch whose object goes unread for
// MaxIdle (five resync periods: objects used only at container start) is
// stopped until the next Get or registration. Failed lists and watches are
// retried with jittered exponential backoff; Get waits at most SyncTimeout
// for an object's first list and then returns ErrNotSynced wrapping the
// cause (a Forbidden, say), and a missing object yields the apiserver's
// NotFound.
//
// The caching strategy (NewCaching) holds no watch: Get reads the object
// on demand and serves it for a TTL (one minute, or what the node's
// node.alpha.kubernetes.io/ttl annotation says, see TTLFromNode); registering
// a pod invalidates what it references, so new and updated pods read
// current data. It suits apiservers that must not carry per-object watches.
//
//	reg := metrics.NewKubeRegistry()
//	mx, _ := objectcache.NewMetrics(reg)
//	secrets, _ := objectcache.NewWatching(objectcache.Secrets(), objectcache.WatchingOptions{
//		Client: nodeClient, Logger: log, Metrics: mx,
//	})
//	go secrets.Run(ctx)                // watches end with ctx
//	secrets.RegisterPod(pod)           // from the agent's sync loop
//	s, err := secrets.Get(ctx, pod.Namespace, "db-password")
//
// Managers are safe for concurrent use and return shared objects, which
// callers must not modify. Metrics (active watches by kind, Gets, cache hits
// and misses, propagation delay) are registered only on the registry the
// caller passes to NewMetrics.
package objectcache
