// Package expand implements the $(VAR) references of a container's env
// values, command and args, with the kubelet's semantics: $(NAME) is
// replaced by NAME's value when NAME is defined and kept as written when it
// is not; $$ is a literal $; a $ before anything else, and a $( that is
// never closed, are kept as written.
package expand
