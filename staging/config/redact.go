package config

import "net/url"

// redactedValue stands for a credential in a URL shown to people, as
// url.URL.Redacted writes a password.
const redactedValue = "xxxxx"

// RedactURL returns raw as it may be shown in logs, errors, events and
// APIs: userinfo and every query value are replaced with "xxxxx" and the
// fragment is dropped, as any of them may carry a credential. The scheme,
// host, path and query keys stay, so that the URL can still be recognised;
// a credential must therefore not be put in the path. A URL that does not
// parse is not shown at all.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return redactURL(u)
}

func redactURL(u *url.URL) string {
	c := *u
	if c.User != nil {
		if _, ok := c.User.Password(); ok {
			c.User = url.UserPassword(redactedValue, redactedValue)
		} else {
			c.User = url.User(redactedValue)
		}
	}
	if c.RawQuery != "" || c.ForceQuery {
		q, err := url.ParseQuery(c.RawQuery)
		for _, vs := range q {
			for i := range vs {
				vs[i] = redactedValue
			}
		}
		c.RawQuery = q.Encode()
		if err != nil {
			// Pairs that do not parse are dropped by ParseQuery; say
			// that something was there.
			c.RawQuery += "&" + redactedValue
		}
	}
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}
