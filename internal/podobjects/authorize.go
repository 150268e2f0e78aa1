package podobjects

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/nodeagent/nodeagent/staging/objectcache"
)

// ErrNotYetAuthorized: the apiserver does not let the node read the
// pod's objects yet.
var ErrNotYetAuthorized = errors.New("the apiserver does not let the node read the objects of the pod yet")

// The Node authorizer learns of a pod bound to the node from its own watch,
// a moment after the agent's watch has shown the pod: a read of the pod's
// objects in that moment would be refused (403). So before the first read
// for a new pod, the agent asks the apiserver whether it may
// (SelfSubjectAccessReview, never refused), until it may. The authorizer
// adds a pod with every reference at once, so one object stands for all.
const (
	authorizePollInitial = 10 * time.Millisecond
	authorizePollMax     = 500 * time.Millisecond
	// authorizeGiveUp: past this the pod's reads go ahead and fail as the
	// apiserver says, rather than wait unexplained.
	authorizeGiveUp = 30 * time.Second
)

// probe is the one access that stands for every object of pod, or nil if
// the pod reads nothing.
func probe(pod *corev1.Pod) *authzv1.ResourceAttributes {
	if names := objectcache.ConfigMapNames(pod); len(names) > 0 {
		return &authzv1.ResourceAttributes{Namespace: pod.Namespace, Verb: "get", Resource: "configmaps", Name: names[0]}
	}
	if names := objectcache.SecretNames(pod); len(names) > 0 {
		return &authzv1.ResourceAttributes{Namespace: pod.Namespace, Verb: "get", Resource: "secrets", Name: names[0]}
	}
	if usesToken(pod) {
		sa := pod.Spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		return &authzv1.ResourceAttributes{Namespace: pod.Namespace, Verb: "create", Resource: "serviceaccounts", Subresource: "token", Name: sa}
	}
	return nil
}

func usesToken(pod *corev1.Pod) bool {
	return slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool {
		return v.Projected != nil && slices.ContainsFunc(v.Projected.Sources, func(s corev1.VolumeProjection) bool {
			return s.ServiceAccountToken != nil
		})
	})
}

// authorize waits until the apiserver lets the node read pod's objects,
// then lets the pod's reads go ahead.
func (o *Objects) authorize(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod) {
	attrs := probe(pod)
	if attrs != nil {
		backoff := wait.Backoff{Duration: authorizePollInitial, Factor: 2, Steps: 1 << 30, Cap: authorizePollMax}
		start := o.opts.Clock.Now()
		err := wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
			review, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx,
				&authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attrs}}, metav1.CreateOptions{})
			if err == nil && review.Status.Allowed {
				return true, nil
			}
			if o.opts.Clock.Since(start) > authorizeGiveUp {
				o.log.Info("The apiserver still does not let the node read a pod's objects; reading anyway",
					"pod", pod.Namespace+"/"+pod.Name, "podUID", pod.UID, "resource", attrs.Resource, "name", attrs.Name, "err", err)
				return true, nil
			}
			return false, nil
		})
		if err != nil {
			return // ctx ended
		}
	}
	o.mu.Lock()
	delete(o.authorizing, pod.UID)
	current, ok := o.pods[pod.UID]
	if ok {
		o.authorized[pod.UID] = true
		o.configMaps.RegisterPod(current)
		o.secrets.RegisterPod(current)
	}
	o.mu.Unlock()
	if ok && o.listener != nil {
		o.listener.ObjectsReady(pod.UID)
	}
}

// startAuthorizeLocked starts authorize for a registered pod that is not
// authorized and not being authorized. o.mu is held; Run has started.
func (o *Objects) startAuthorizeLocked(pod *corev1.Pod) {
	if o.authorized[pod.UID] || o.authorizing[pod.UID] || o.stopped {
		return
	}
	o.authorizing[pod.UID] = true
	o.wg.Add(1)
	go func() {
		defer o.wg.Done()
		o.authorize(o.runCtx, o.client, pod)
	}()
}

// readable reports whether a pod the apiserver lets the node read for
// references the object. o.mu is held.
func (o *Objects) readableLocked(secret bool, namespace, name string) bool {
	names := objectcache.ConfigMapNames
	if secret {
		names = objectcache.SecretNames
	}
	for uid, pod := range o.pods {
		if o.authorized[uid] && pod.Namespace == namespace && slices.Contains(names(pod), name) {
			return true
		}
	}
	return false
}

func notYet(kind, namespace, name string) error {
	return fmt.Errorf("%s %s/%s: %w", kind, namespace, name, ErrNotYetAuthorized)
}
