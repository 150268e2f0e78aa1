package tokens

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

const (
	// The API's default and minimum for expirationSeconds.
	defaultExpirationSeconds = 60 * 60
	minExpirationSeconds     = 10 * 60

	// A JWT of a few claims is about 1 KiB; anything near this is not a
	// token to write into a pod.
	maxTokenBytes = 64 << 10

	// Tokens are refreshed at this fraction of their lifetime, or after
	// maxAge, whichever comes first.
	refreshNumerator, refreshDenominator = 8, 10
	maxAge                               = 24 * time.Hour
)

// key names one cached token. A pod UID is never reused, so it also stands
// for the pod's name in the bound object reference.
type key struct {
	namespace, serviceAccount, audience string
	expirationSeconds                   int64
	pod                                 types.UID
}

// flight is the key as a string for singleflight; quoting keeps it
// unambiguous whatever the audience holds.
func (k key) flight() string {
	return strconv.Quote(k.namespace) + strconv.Quote(k.serviceAccount) + strconv.Quote(k.audience) +
		strconv.FormatInt(k.expirationSeconds, 10) + strconv.Quote(string(k.pod))
}

func (k key) String() string {
	return fmt.Sprintf("serviceaccount %s/%s", k.namespace, k.serviceAccount)
}

// request checks what is asked for and returns its key and TokenRequest.
func request(pod *corev1.Pod, p *corev1.ServiceAccountTokenProjection) (key, *authenticationv1.TokenRequest, error) {
	switch {
	case pod == nil:
		return key{}, nil, errors.New("service account token: no pod")
	case p == nil:
		return key{}, nil, fmt.Errorf("pod %s/%s: service account token: no projection", pod.Namespace, pod.Name)
	case pod.Namespace == "" || pod.Name == "" || pod.UID == "":
		// The token is bound to the pod, which needs all three.
		return key{}, nil, fmt.Errorf("pod %s/%s (uid %q): service account token: the pod needs a namespace, a name and a UID to bind a token to", pod.Namespace, pod.Name, pod.UID)
	}
	k := key{
		namespace:         pod.Namespace,
		serviceAccount:    pod.Spec.ServiceAccountName,
		audience:          p.Audience,
		expirationSeconds: defaultExpirationSeconds,
		pod:               pod.UID,
	}
	if k.serviceAccount == "" {
		k.serviceAccount = "default"
	}
	if p.ExpirationSeconds != nil {
		k.expirationSeconds = *p.ExpirationSeconds
	}
	if k.expirationSeconds < minExpirationSeconds {
		return key{}, nil, fmt.Errorf("pod %s/%s: serviceAccountToken %q: expirationSeconds %d is below the minimum of %d",
			pod.Namespace, pod.Name, p.Path, k.expirationSeconds, minExpirationSeconds)
	}
	tr := &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			ExpirationSeconds: &k.expirationSeconds,
			BoundObjectRef: &authenticationv1.BoundObjectReference{
				Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID,
			},
		},
	}
	// No audience asks for the apiserver's own.
	if k.audience != "" {
		tr.Spec.Audiences = []string{k.audience}
	}
	return k, tr, nil
}

// entry is a cached token.
type entry struct {
	token     string
	expires   time.Time
	refreshAt time.Time
	// retryAt is when a refresh may be tried again after one failed.
	retryAt time.Time
}

// next is when the token should next be asked for.
func (e entry) next() time.Time {
	if e.retryAt.After(e.refreshAt) {
		return e.retryAt
	}
	return e.refreshAt
}

// accept checks the apiserver's answer to a request sent at issued and
// returns it as an entry.
func accept(tr *authenticationv1.TokenRequest, issued time.Time) (entry, error) {
	if tr == nil || tr.Status.Token == "" {
		return entry{}, errors.New("the apiserver returned no token")
	}
	if n := len(tr.Status.Token); n > maxTokenBytes {
		return entry{}, fmt.Errorf("the apiserver returned a token of %d bytes, over the limit of %d", n, maxTokenBytes)
	}
	expires := tr.Status.ExpirationTimestamp.Time
	if !expires.After(issued) {
		return entry{}, fmt.Errorf("the apiserver returned a token that expires at %s, not after it was requested at %s (clocks apart?)",
			expires.UTC().Format(time.RFC3339), issued.UTC().Format(time.RFC3339))
	}
	// Divide first: a lifetime of years times 8 overflows a Duration.
	refreshAt := issued.Add(expires.Sub(issued) / refreshDenominator * refreshNumerator)
	if limit := issued.Add(maxAge); refreshAt.After(limit) {
		refreshAt = limit
	}
	return entry{token: tr.Status.Token, expires: expires, refreshAt: refreshAt}, nil
}
