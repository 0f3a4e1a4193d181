//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lazyFS is a LazyFS mount (../shared/tools/lazyfs): a FUSE file system
// with a page cache of its own, which drops on command every write not
// yet fsynced, as a power loss does (kill -9 keeps the kernel's page
// cache). Create, rename and unlink go straight to the backing folder,
// and fsync of a directory is not modelled: it tests lost data, not lost
// directory entries.
type lazyFS struct {
	t    *testing.T
	bin  string // the lazyfs binary
	work string
	mnt  string // the file system under test
	root string // its backing folder
	proc *exec.Cmd
}

// lazyFSEnv names the variable that gives the power-loss test the LazyFS
// binary; .ci/run builds it (bash ../shared/tools/lazyfs/build.sh) and
// sets it.
const lazyFSEnv = "URLHASH_LAZYFS"

// newLazyFS mounts a LazyFS under t's temporary directory, unmounted at
// the end of the test. It skips the test, naming what is missing, where
// the binary, /dev/fuse or fusermount3 is, or when not root.
func newLazyFS(t *testing.T) *lazyFS {
	t.Helper()
	bin := os.Getenv(lazyFSEnv)
	var missing []string
	if bin == "" {
		missing = append(missing, lazyFSEnv+" (the lazyfs binary: LAZYFS=$(bash ../shared/tools/lazyfs/build.sh /tmp/lazyfs); .ci/run sets it)")
	} else if _, err := os.Stat(bin); err != nil {
		missing = append(missing, fmt.Sprintf("the lazyfs binary %s=%s (%v)", lazyFSEnv, bin, err))
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		missing = append(missing, "/dev/fuse")
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		missing = append(missing, "fusermount3 (Debian's fuse3)")
	}
	if os.Geteuid() != 0 {
		missing = append(missing, "root (a FUSE mount with allow_other)")
	}
	if len(missing) > 0 {
		t.Skipf("skipped: the power-loss test needs %s", strings.Join(missing, ", "))
	}
	work, err := os.MkdirTemp("", "urlhash-lazyfs-")
	if err != nil {
		t.Fatal(err)
	}
	l := &lazyFS{t: t, bin: bin, work: work, mnt: filepath.Join(work, "mnt"), root: filepath.Join(work, "root")}
	for _, d := range []string{l.mnt, l.root} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	config := fmt.Sprintf(`[faults]
fifo_path=%q
fifo_path_completed=%q
[cache]
apply_eviction=false
[cache.simple]
custom_size="512mb"
blocks_per_page=1
[filesystem]
log_all_operations=false
logfile=%q
`, l.fifo(), l.fifoDone(), filepath.Join(work, "lazyfs.log"))
	if err := os.WriteFile(filepath.Join(work, "lazyfs.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.umount()
		if !t.Failed() {
			os.RemoveAll(work)
		} else {
			t.Logf("LazyFS's folder kept: %s", work)
		}
	})
	l.mount()
	return l
}

func (l *lazyFS) fifo() string     { return filepath.Join(l.work, "faults.fifo") }
func (l *lazyFS) fifoDone() string { return filepath.Join(l.work, "faults_done.fifo") }

// mounted reports whether the mount is in the mount table.
func (l *lazyFS) mounted() bool {
	b, err := os.ReadFile("/proc/self/mounts")
	return err == nil && strings.Contains(string(b), " "+l.mnt+" fuse.lazyfs ")
}

// mount mounts the LazyFS (as lfs.sh's lfs_mount) and waits for it.
func (l *lazyFS) mount() {
	l.t.Helper()
	os.Remove(l.fifo())
	os.Remove(l.fifoDone())
	out, err := os.OpenFile(filepath.Join(l.work, "lazyfs.out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		l.t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(l.bin, l.mnt, "--config-path", filepath.Join(l.work, "lazyfs.toml"),
		"-o", "allow_other", "-o", "modules=subdir", "-o", "subdir="+l.root, "-f")
	cmd.Dir = filepath.Dir(filepath.Dir(l.bin))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("lazyfs: %v", err)
	}
	l.proc = cmd
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if fi, err := os.Stat(l.fifoDone()); err == nil && fi.Mode()&os.ModeNamedPipe != 0 && l.mounted() {
			time.Sleep(200 * time.Millisecond)
			return
		}
	}
	b, _ := os.ReadFile(filepath.Join(l.work, "lazyfs.out"))
	l.t.Fatalf("LazyFS did not mount within 60 s: %s", b)
}

// umount unmounts the LazyFS: whatever it still caches is dropped.
func (l *lazyFS) umount() {
	if l.proc == nil {
		return
	}
	if err := exec.Command("fusermount3", "-u", l.mnt).Run(); err != nil {
		l.proc.Process.Kill()
		time.Sleep(500 * time.Millisecond)
		exec.Command("fusermount3", "-u", "-z", l.mnt).Run()
	}
	done := make(chan struct{})
	go func() { l.proc.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		l.proc.Process.Kill()
		<-done
	}
	l.proc = nil
}

// clear drops every write not yet fsynced (as lfs.sh's lfs_clear) and
// waits for LazyFS to confirm.
func (l *lazyFS) clear() error {
	done, err := os.OpenFile(l.fifoDone(), os.O_RDWR, 0) // a reader before the command
	if err != nil {
		return fmt.Errorf("lazyfs: %w", err)
	}
	defer done.Close()
	sent := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(l.fifo(), os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString("lazyfs::clear-cache\n")
			f.Close()
		}
		sent <- err
	}()
	select {
	case err := <-sent:
		if err != nil {
			return fmt.Errorf("lazyfs: clear: %w", err)
		}
	case <-time.After(10 * time.Second):
		return fmt.Errorf("lazyfs: clear: the command was not taken within 10 s")
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(done).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case s := <-line:
		if s != "finished::clear-cache" {
			return fmt.Errorf("lazyfs: clear: %q", s)
		}
	case <-time.After(30 * time.Second):
		return fmt.Errorf("lazyfs: clear: no completion within 30 s")
	}
	return nil
}

// A powerRound runs the writers of one round and cuts the power under
// them: processes start through it, and lose stops them all (SIGSTOP),
// drops what was not fsynced, kills them (SIGKILL) and drops what reached
// LazyFS meanwhile. Once the power is lost no process starts.
type powerRound struct {
	l     *lazyFS
	mu    sync.Mutex
	lost  bool
	procs []*exec.Cmd
	// merging, when set, reports whether the writers were in the middle
	// of a key-table merge (counted at the loss).
	merging func() bool
	// duringMerge is set when merging said so at the loss.
	duringMerge bool
	during      bool  // the power was cut while the writers ran (see end)
	err         error // of LazyFS, at the loss
}

func newPowerRound(l *lazyFS) *powerRound { return &powerRound{l: l} }

// start starts cmd unless the power is lost (then false).
func (r *powerRound) start(cmd *exec.Cmd) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lost {
		return false, nil
	}
	if err := cmd.Start(); err != nil {
		return false, err
	}
	r.procs = append(r.procs, cmd)
	return true, nil
}

// isLost reports whether the power was lost.
func (r *powerRound) isLost() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lost
}

// lose cuts the power (see powerRound); the processes' Wait is their
// starters'.
func (r *powerRound) lose() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lost {
		return
	}
	r.lost = true
	for _, c := range r.procs {
		c.Process.Signal(syscall.SIGSTOP)
	}
	if r.merging != nil {
		r.duringMerge = r.merging()
	}
	err := r.l.clear()
	for _, c := range r.procs {
		c.Process.Signal(syscall.SIGKILL)
	}
	r.err = errors.Join(err, r.l.clear())
}

// end cuts the power once the round's writers have ended, unless it was
// cut while they ran (which it records in during).
func (r *powerRound) end() {
	r.mu.Lock()
	r.during = r.lost
	r.mu.Unlock()
	r.lose()
}

// run runs cmd to its end unless the power is lost first: ok reports
// that it exited 0 (its writes acknowledged); false with a nil error
// that the power loss killed it or kept it from starting.
func (r *powerRound) run(cmd *exec.Cmd) (ok bool, err error) {
	started, err := r.start(cmd)
	if !started {
		return false, err
	}
	werr := cmd.Wait()
	if werr == nil {
		return true, nil
	}
	if r.isLost() {
		return false, nil
	}
	return false, werr
}

// cycle unmounts and mounts again, after lose and once every process
// started has exited: the kernel's cache of the mount goes with it, so
// that reads see what LazyFS kept.
func (r *powerRound) cycle() {
	r.l.t.Helper()
	if r.err != nil {
		r.l.t.Fatal(r.err)
	}
	r.l.umount()
	r.l.mount()
}
