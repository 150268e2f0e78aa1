// Package tokens obtains and caches the service account tokens that pods'
// projected volumes carry, as the node, through the TokenRequest API.
//
// A Manager asks the apiserver (CreateToken on the pod's service account)
// for a token bound to the pod: NodeRestriction lets a node request only
// tokens bound to a pod scheduled on it, so every token is bound, and it
// becomes invalid when the pod is deleted. A token is cached per pod,
// service account, audience and requested lifetime, and handed out again
// until it needs refreshing:
//
//	refresh at  min(issued + 80% of its lifetime, issued + 24 h)
//
// where issued is the node's clock when the request was sent and the
// lifetime runs from there to the expiration the apiserver returned. A
// refresh that fails while the cached token is still valid returns the
// cached token (logged) and is tried again no sooner than 10 s later, so
// an unreachable apiserver is not asked once per caller; once the cached
// token has expired, the failure is the caller's.
//
// NextRefresh tells the agent (internal/podobjects) when to sync a pod
// again to rewrite its token files; DeletePod forgets a pod's tokens. Concurrent calls for one token
// share one request. The Manager starts no goroutine of its own beyond the
// one carrying a shared request.
package tokens
