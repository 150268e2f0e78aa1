package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// settle is how long the stream is left open after its first line before the
// container is given the line that is timed: the node is then waiting for
// the log to grow, as it is for a line written at any later moment.
const settle = 200 * time.Millisecond

// line is one line kubectl printed and when this process read it.
type line struct {
	text string
	at   time.Time
}

// logsOnce starts `kubectl logs -f --tail=1`, waits for its first line (the
// stream is open), hands the container a line through the FIFO, and times
// from that write to kubectl printing the line.
func (o options) logsOnce(ctx context.Context, t target, i int) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cmd := o.kubectlCmd(ctx, t, "logs", "-f", o.pod, "-c", o.logContainer, "--tail=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("kubectl logs: %w", err)
	}
	lines := make(chan line, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		readLines(ctx, stdout, lines)
	}()
	defer func() {
		cancel() // kills kubectl, which ends the reader
		<-done
		_ = cmd.Wait()
	}()

	if _, err := next(ctx, lines); err != nil {
		return 0, fmt.Errorf("kubectl logs, its first line: %w", err)
	}
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	mark := fmt.Sprintf("bench-nodeapi-%d-%d", os.Getpid(), i)
	start, err := writeFIFO(ctx, t.fifo, mark+"\n")
	if err != nil {
		return 0, err
	}
	for {
		l, err := next(ctx, lines)
		if err != nil {
			return 0, fmt.Errorf("kubectl logs, waiting for %q: %w", mark, err)
		}
		if l.text == mark {
			return l.at.Sub(start), nil
		}
	}
}

// readLines sends each line of r, stamped when read, until r ends or ctx does.
func readLines(ctx context.Context, r io.Reader, lines chan<- line) {
	defer close(lines)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		select {
		case lines <- line{text: sc.Text(), at: time.Now()}:
		case <-ctx.Done():
			return
		}
	}
}

func next(ctx context.Context, lines <-chan line) (line, error) {
	select {
	case l, ok := <-lines:
		if !ok {
			return line{}, errors.New("kubectl's output ended")
		}
		return l, nil
	case <-ctx.Done():
		return line{}, ctx.Err()
	}
}

// writeFIFO writes s to the FIFO at path once its reader has it open, and
// returns when the write began. Opening without blocking fails (ENXIO)
// while no reader has the FIFO open: the container's shell reopens it after
// each line, so the open is retried until ctx ends.
func writeFIFO(ctx context.Context, path, s string) (time.Time, error) {
	for {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0) // #nosec G304 -- the operator names the FIFO
		if err == nil {
			start := time.Now()
			_, err = io.WriteString(f, s)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return time.Time{}, fmt.Errorf("--fifo %s: %w", path, err)
			}
			return start, nil
		}
		if !errors.Is(err, syscall.ENXIO) {
			return time.Time{}, fmt.Errorf("--fifo %s: %w", path, err)
		}
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("--fifo %s: no reader: %w", path, ctx.Err())
		}
	}
}
