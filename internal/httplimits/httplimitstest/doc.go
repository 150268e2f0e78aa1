// Package httplimitstest checks, from a client's side, that a running
// server holds the bounds of an httplimits.Limits: slow and silent clients
// are cut off, a normal request goes through meanwhile, the connection
// count is capped and over-large headers are refused. The local API's and
// the serving address's tests run it against the real servers.
package httplimitstest
