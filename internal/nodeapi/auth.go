package nodeapi

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	apiserverconfig "k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
)

// The kubelet's defaults for its webhook authentication and authorization
// caches.
const (
	tokenCacheTTL  = 2 * time.Minute
	allowCacheTTL  = 5 * time.Minute
	denyCacheTTL   = 30 * time.Second
	reviewAttempts = 5
)

// auth authenticates and authorizes every request through the apiserver.
type auth struct {
	authn    authenticator.Request
	authz    authorizer.Authorizer
	nodeName string
	// clientCA, when set, is reloaded from its file while the server runs.
	clientCA *dynamiccertificates.DynamicFileCAContent
}

// newAuth builds the delegating authenticator and authorizer. Anonymous
// requests are refused: the node's API has nothing for them.
func newAuth(o *Options) (*auth, error) {
	backoff := &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: reviewAttempts}
	a := &auth{nodeName: o.NodeName}
	cfg := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:               &apiserverconfig.AnonymousAuthConfig{Enabled: false},
		TokenAccessReviewClient: o.Client.AuthenticationV1(),
		WebhookRetryBackoff:     backoff,
		CacheTTL:                tokenCacheTTL,
	}
	if o.ClientCAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file %s: %w", o.ClientCAFile, err)
		}
		a.clientCA = ca
		cfg.ClientCertificateCAContentProvider = ca
	}
	authn, _, err := cfg.New()
	if err != nil {
		return nil, fmt.Errorf("building the delegating authenticator: %w", err)
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: o.Client.AuthorizationV1(),
		AllowCacheTTL:             allowCacheTTL,
		DenyCacheTTL:              denyCacheTTL,
		WebhookRetryBackoff:       backoff,
	}.New()
	if err != nil {
		return nil, fmt.Errorf("building the delegating authorizer: %w", err)
	}
	a.authn, a.authz = authn, authz
	return a, nil
}

// run reloads the client CA file on change until ctx ends.
func (a *auth) run(ctx context.Context) {
	if a.clientCA != nil {
		a.clientCA.Run(ctx, 1)
	}
}

// filter lets a request through to next once the apiserver has said who
// sent it (401 otherwise) and that they may do what its path asks of the
// node (403 otherwise). The request's credentials are removed before
// next sees it: nothing beyond this filter needs them, and streams are
// proxied to the runtime.
func (a *auth) filter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, ok, err := a.authn.AuthenticateRequest(r)
		if err != nil || !ok {
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}
		attrs := requestAttributes(a.nodeName, resp.User, r)
		var subresources []string
		for _, attr := range attrs {
			subresources = append(subresources, attr.Subresource)
			decision, _, err := a.authz.Authorize(r.Context(), attr)
			if err != nil {
				http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=nodes, subresource=%s)", resp.User.GetName(), attr.Verb, attr.Subresource), http.StatusInternalServerError)
				return
			}
			if decision == authorizer.DecisionAllow {
				r.Header.Del("Authorization")
				next.ServeHTTP(w, r)
				return
			}
		}
		http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=nodes, subresource(s)=%v)", resp.User.GetName(), attrs[0].Verb, subresources), http.StatusForbidden)
	})
}
