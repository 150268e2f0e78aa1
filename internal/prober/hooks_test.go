package prober

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/clock"
)

func TestRunHook(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/drain":
		case "/away":
			http.Redirect(w, r, "http://0.0.0.0/", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	port := int32(serverPort(t, srv))
	exec := &fakeExec{script: map[string][]int{"bad": {2}}, calls: make(chan string, 10)}
	m, err := New(Options{Exec: exec, Clock: clock.RealClock{}})
	if err != nil {
		t.Fatal(err)
	}
	pod := probedPod(corev1.Container{})
	c := &pod.Spec.Containers[0]
	for _, tc := range []struct {
		name    string
		hook    corev1.LifecycleHandler
		id      string
		timeout time.Duration
		fails   bool
		atLeast time.Duration
	}{
		{name: "exec exits 0", hook: corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"x"}}}, id: "good", timeout: time.Second},
		{name: "exec exits 2", hook: corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"x"}}}, id: "bad", timeout: time.Second, fails: true},
		{name: "httpGet 200", hook: corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/drain", Port: intstr.FromInt32(port), Host: "127.0.0.1"}}, timeout: time.Second},
		{name: "httpGet redirected to another host", hook: corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/away", Port: intstr.FromInt32(port), Host: "127.0.0.1"}}, timeout: time.Second},
		{name: "httpGet 404", hook: corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/nope", Port: intstr.FromInt32(port), Host: "127.0.0.1"}}, timeout: time.Second, fails: true},
		{name: "sleep", hook: corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}, timeout: 5 * time.Second, atLeast: time.Second},
		{name: "sleep cut short by the timeout", hook: corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 30}}, timeout: 100 * time.Millisecond, atLeast: 100 * time.Millisecond},
		{name: "no time left", hook: corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 1}}, timeout: 0, fails: true},
		{name: "tcpSocket", hook: corev1.LifecycleHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}}, timeout: time.Second, fails: true},
	} {
		began := time.Now()
		err := m.RunHook(context.Background(), &tc.hook, pod, c, tc.id, "", tc.timeout)
		took := time.Since(began)
		if (err != nil) != tc.fails || err != nil && !errors.Is(err, ErrHookFailed) {
			t.Errorf("%s: err = %v, want failure %v", tc.name, err, tc.fails)
		}
		if took < tc.atLeast || took > tc.atLeast+2*time.Second {
			t.Errorf("%s: took %v, want about %v", tc.name, took, tc.atLeast)
		}
	}
}
