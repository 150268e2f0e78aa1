package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	cert := flag.String("cert", "", "TLS serving certificate (PEM)")
	key := flag.String("key", "", "TLS serving key (PEM)")
	user := flag.String("user", "", "the one user that may push and read private/ repositories")
	passwordFile := flag.String("password-file", "", "file holding that user's password")
	addrFile := flag.String("addr-file", "", "where to write host:port once listening")
	flag.Parse()
	if err := run(*cert, *key, *user, *passwordFile, *addrFile); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}

func run(cert, key, user, passwordFile, addrFile string) error {
	if cert == "" || key == "" || user == "" || passwordFile == "" || addrFile == "" {
		return errors.New("-cert, -key, -user, -password-file and -addr-file are required")
	}
	pw, err := os.ReadFile(passwordFile)
	if err != nil {
		return err
	}
	// Loopback only: the registry is the tests', never the network's.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           &auth{user: user, password: strings.TrimSpace(string(pw)), next: registry.New(registry.Logger(log.New(io.Discard, "", 0)))},
		ReadHeaderTimeout: 10 * time.Second,
	}
	// Written once listening, through a rename: whoever polls for the
	// file never reads half an address.
	tmp := addrFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(l.Addr().String()), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, addrFile); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	if err := srv.ServeTLS(l, cert, key); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// auth guards the registry with basic auth: see the package comment for
// what needs it.
type auth struct {
	user, password string
	next           http.Handler
}

func (a *auth) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	user, ok := a.authenticate(r)
	switch {
	case ok, !needsAuth(r) && user == "":
		a.next.ServeHTTP(rec, r)
	default:
		// A wrong password is refused as an anonymous request is: both
		// get the challenge again.
		w.Header().Set("WWW-Authenticate", `Basic realm="nodeagent-test-registry"`)
		http.Error(rec, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
	}
	log.Printf("%s %s %d user=%q", r.Method, r.URL.Path, rec.status, user)
}

// authenticate returns the user a request names, and whether its
// password is right.
func (a *auth) authenticate(r *http.Request) (string, bool) {
	user, password, ok := r.BasicAuth()
	if !ok {
		return "", false
	}
	good := subtle.ConstantTimeCompare([]byte(user), []byte(a.user)) == 1 &&
		subtle.ConstantTimeCompare([]byte(password), []byte(a.password)) == 1
	return user, good
}

// needsAuth: writes, the ping, and reads of private/ repositories.
func needsAuth(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return true
	}
	path := strings.TrimPrefix(r.URL.Path, "/v2/")
	return path == "" || path == r.URL.Path || strings.HasPrefix(path, "private/")
}

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}
