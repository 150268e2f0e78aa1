// Package serviceenv gives pods the service environment variables the
// kubelet gives them: for every pod, those of the kubernetes Service of
// the default namespace (KUBERNETES_SERVICE_HOST, KUBERNETES_PORT, ...),
// and, when the pod's enableServiceLinks is true (the default), those of
// every Service of the pod's namespace that has a cluster IP, named in the
// Docker-link style (FOO_BAR_SERVICE_HOST for the Service foo-bar).
//
// In connected mode a Services reads them from one shared informer on the
// cluster's Services (the node identity may list and watch them); the
// runtime asks it for a pod's variables at each container start and
// nothing calls the apiserver then. Standalone there is no Services, and
// no service variable, as with a kubelet without an apiserver.
//
// A Service that is deleted is gone from the cache, and its variables from
// the next container that starts; running containers keep theirs, as under
// the kubelet.
package serviceenv
