package tokens

import (
	"context"
	"errors"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The apiserver's NodeRestriction admission checks a node's TokenRequest
// against the bound pod as its own informer has it, which lags the
// binding the node has already seen: for that moment the pod is "not
// found", or "scheduled on a different node" (not scheduled yet). Such a
// refusal is asked again at once, briefly, instead of failing the pod's
// volumes into a full back-off: under load the lag is a second or two.
const (
	lagRetryInitial = 50 * time.Millisecond
	lagRetryMax     = 500 * time.Millisecond
	// lagRetryFor bounds the wait; past it the refusal is the answer.
	lagRetryFor = 10 * time.Second
)

// createToken asks the apiserver for k's token, again while NodeRestriction
// has not caught up with the pod's binding (see above).
func (m *Manager) createToken(ctx context.Context, k key, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	var got *authenticationv1.TokenRequest
	var err error
	deadline := time.Now().Add(lagRetryFor)
	backoff := wait.Backoff{Duration: lagRetryInitial, Factor: 2, Steps: 1 << 30, Cap: lagRetryMax}
	_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		got, err = m.client.CoreV1().ServiceAccounts(k.namespace).CreateToken(ctx, k.serviceAccount, tr, metav1.CreateOptions{})
		if err == nil || !bindingNotSeenYet(err) || time.Now().After(deadline) {
			return true, nil
		}
		m.metrics.request("lagging")
		m.log.V(4).Info("The apiserver has not seen the pod bound to this node yet; asking again", "serviceAccount", k.namespace+"/"+k.serviceAccount, "podUID", k.pod, "err", err)
		return false, nil
	})
	if got == nil && err == nil {
		err = ctx.Err() // ended while waiting to ask again
	}
	return got, err
}

// bindingNotSeenYet reports whether err is NodeRestriction's refusal of a
// token for a pod its informer has not seen bound to this node yet.
func bindingNotSeenYet(err error) bool {
	if apierrors.IsForbidden(err) {
		return strings.Contains(err.Error(), "scheduled on a different node")
	}
	var status *apierrors.StatusError
	if apierrors.IsNotFound(err) && errors.As(err, &status) {
		// The pod, not the service account.
		return status.ErrStatus.Details != nil && status.ErrStatus.Details.Kind == "pods"
	}
	return false
}
