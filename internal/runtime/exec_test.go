package runtime

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	utilexec "k8s.io/utils/exec"
)

func TestExecSyncOutcomes(t *testing.T) {
	for name, tc := range map[string]struct {
		inject   error
		wantCode int
		wantErr  error
	}{
		"exit 0":                   {},
		"exit 3 is a result":       {inject: utilexec.CodeExitError{Err: errors.New("exit 3"), Code: 3}, wantCode: 3},
		"gRPC deadline":            {inject: grpcstatus.Error(codes.DeadlineExceeded, "slow"), wantErr: ErrExecTimeout},
		"containerd's own timeout": {inject: errors.New("timeout 1s exceeded: context deadline exceeded"), wantErr: ErrExecTimeout},
		"other":                    {inject: errors.New("container not running"), wantErr: errAny},
	} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			if tc.inject != nil {
				w.cri.InjectError("ExecSync", tc.inject)
			}
			res, err := w.rt.ExecSync(context.Background(), "c1", []string{"true"}, time.Second)
			switch {
			case tc.wantErr == nil && err != nil:
				t.Fatalf("err = %v, want a result", err)
			case tc.wantErr == errAny && err == nil, tc.wantErr != nil && tc.wantErr != errAny && !errors.Is(err, tc.wantErr):
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if res.ExitCode != tc.wantCode {
				t.Fatalf("exit code = %d, want %d", res.ExitCode, tc.wantCode)
			}
		})
	}
}

var errAny = errors.New("any error")
