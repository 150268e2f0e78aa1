package config

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// maxRedirects bounds the redirects one poll of the manifest URL follows.
const maxRedirects = 5

// checkScheme refuses a URL the HTTP source must not fetch: only http and
// https are followed, whatever the client's transport could do.
func checkScheme(u *url.URL) error {
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("scheme %q refused: only http and https are followed", u.Scheme)
	case u.Host == "":
		return errors.New("no host")
	}
	return nil
}

// redirectPolicy is the HTTP source's http.Client CheckRedirect: it
// follows at most maxRedirects redirects, only to http and https URLs,
// never from https down to http (the manifest, and what the request
// carries, would travel in the clear), and sends the configured headers,
// the URL's userinfo and the Referer (the previous URL, query and all)
// only to the server the URL names. Once a redirect leaves that server
// (another host or port) they are dropped for the rest of the chain, so
// that a server cannot forward the credentials elsewhere. next, the
// client's own policy, if any, runs after.
func redirectPolicy(header http.Header, next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		if err := checkScheme(req.URL); err != nil {
			return fmt.Errorf("redirect to %s: %w", redactURL(req.URL), err)
		}
		if req.URL.Scheme == "http" && slices.ContainsFunc(via, func(hop *http.Request) bool { return hop.URL.Scheme == "https" }) {
			return fmt.Errorf("redirect to %s refused: it leaves https for http", redactURL(req.URL))
		}
		left := !sameServer(via[0].URL, req.URL)
		for _, hop := range via[1:] {
			left = left || !sameServer(via[0].URL, hop.URL)
		}
		if left {
			for name := range header {
				req.Header.Del(name)
			}
			req.Header.Del("Authorization")
			req.Header.Del("Referer")
			req.URL.User = nil
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

// sameServer tells whether a request to b goes to the server the
// credentials for a were given for: the same host name and port, or an
// upgrade from http to https on the same host name (the policy refuses
// the way down).
func sameServer(a, b *url.URL) bool {
	if !strings.EqualFold(a.Hostname(), b.Hostname()) {
		return false
	}
	if a.Scheme == b.Scheme {
		return port(a) == port(b)
	}
	return a.Scheme == "http" && b.Scheme == "https"
}

// port is u's port, the scheme's default if the URL names none.
func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// redactError spells a client error with its URL redacted: net/http names
// the URL it failed on, query and all.
func redactError(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return &url.Error{Op: uerr.Op, URL: RedactURL(uerr.URL), Err: uerr.Err}
	}
	return err
}
