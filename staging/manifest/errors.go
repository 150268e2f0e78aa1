package manifest

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Sentinel errors. Every *ManifestError matches ErrManifest and the sentinel
// of its Reason with errors.Is.
var (
	// ErrManifest matches every refused manifest, whatever the reason.
	ErrManifest = errors.New("manifest refused")
	// ErrEmpty: the manifest holds no document.
	ErrEmpty = errors.New("manifest is empty")
	// ErrTooLarge: the manifest exceeds a size bound (MaxManifestBytes, or
	// a list longer than its bound).
	ErrTooLarge = errors.New("manifest is too large")
	// ErrEncoding: the manifest is not UTF-8 (nor UTF-16 with a
	// byte-order mark, which is transcoded).
	ErrEncoding = errors.New("manifest is not UTF-8 text")
	// ErrSyntax: the manifest is not well-formed YAML or JSON, or a value
	// has the wrong type.
	ErrSyntax = errors.New("manifest does not parse")
	// ErrStrict: the manifest has unknown or duplicate fields.
	ErrStrict = errors.New("manifest has unknown or duplicate fields")
	// ErrKind: the manifest is not a v1 Pod or PodList, or holds several
	// documents.
	ErrKind = errors.New("manifest is not a v1 Pod or PodList")
	// ErrInvalid: the pod fails validation.
	ErrInvalid = errors.New("pod is invalid")
	// ErrDuplicate: the pod's full name is already used by another pod.
	ErrDuplicate = errors.New("pod full name is already in use")
	// ErrRead: the manifest could not be read (permissions, a symlink loop,
	// a broken symlink, not a regular file).
	ErrRead = errors.New("manifest cannot be read")
	// ErrFetch: the HTTP source could not fetch its URL.
	ErrFetch = errors.New("manifest URL cannot be fetched")
)

// Reason classifies a refusal. Its string is the metric label.
type Reason string

// The reasons a manifest is refused.
const (
	ReasonEmpty     Reason = "Empty"
	ReasonTooLarge  Reason = "TooLarge"
	ReasonEncoding  Reason = "Encoding"
	ReasonSyntax    Reason = "Syntax"
	ReasonStrict    Reason = "UnknownField"
	ReasonKind      Reason = "WrongKind"
	ReasonInvalid   Reason = "Invalid"
	ReasonDuplicate Reason = "DuplicateName"
	ReasonRead      Reason = "Unreadable"
	ReasonFetch     Reason = "FetchFailed"
)

var reasonSentinel = map[Reason]error{
	ReasonEmpty:     ErrEmpty,
	ReasonTooLarge:  ErrTooLarge,
	ReasonEncoding:  ErrEncoding,
	ReasonSyntax:    ErrSyntax,
	ReasonStrict:    ErrStrict,
	ReasonKind:      ErrKind,
	ReasonInvalid:   ErrInvalid,
	ReasonDuplicate: ErrDuplicate,
	ReasonRead:      ErrRead,
	ReasonFetch:     ErrFetch,
}

// ManifestError says why a manifest was refused: where it came from, which
// fields are wrong and why.
type ManifestError struct {
	// Origin is the file path or URL of the manifest; empty when the bytes
	// were decoded without one.
	Origin string
	Reason Reason
	// Fields are the offending fields, each with its path (for example
	// spec.containers[1].ports[0].containerPort) and what is wrong with it.
	// A manifest that fails as a whole has none, and Detail says why.
	Fields field.ErrorList
	Detail string
	// omitted counts the offending fields left out of Fields.
	omitted int
}

// maxFieldErrors bounds the fields a refusal lists: a manifest of many bad
// items would otherwise make a message of megabytes, logged, published and
// sent as an event.
const maxFieldErrors = 20

// capFields keeps the first maxFieldErrors fields and counts the rest.
func (e *ManifestError) capFields() *ManifestError {
	if n := len(e.Fields) - maxFieldErrors; n > 0 {
		e.Fields = e.Fields[:maxFieldErrors:maxFieldErrors]
		e.omitted += n
	}
	return e
}

func (e *ManifestError) Error() string {
	var b strings.Builder
	if e.Origin != "" {
		b.WriteString(e.Origin)
		b.WriteString(": ")
	}
	b.WriteString(reasonSentinel[e.Reason].Error())
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	for i, f := range e.Fields {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(f.Error())
	}
	if e.omitted > 0 {
		fmt.Fprintf(&b, "; and %d more", e.omitted)
	}
	return b.String()
}

// Unwrap lets errors.Is match ErrManifest and the reason's sentinel.
func (e *ManifestError) Unwrap() []error {
	return []error{ErrManifest, reasonSentinel[e.Reason]}
}

// Field returns the path of the first offending field, or "".
func (e *ManifestError) Field() string {
	if len(e.Fields) == 0 {
		return ""
	}
	return e.Fields[0].Field
}

func refuse(reason Reason, format string, args ...any) *ManifestError {
	return &ManifestError{Reason: reason, Detail: fmt.Sprintf(format, args...)}
}

func refuseFields(reason Reason, errs field.ErrorList) *ManifestError {
	return (&ManifestError{Reason: reason, Fields: errs}).capFields()
}

// withOrigin returns err with its origin set, if it is a *ManifestError.
func withOrigin(err error, origin string) error {
	var me *ManifestError
	if errors.As(err, &me) {
		c := *me
		c.Origin = origin
		return &c
	}
	return err
}
