package qemuguest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The archive is checked with GNU cpio (which scripts/deps.sh installs), an
// implementation independent of this one: listing, modes, contents.
func TestWriteCpio(t *testing.T) {
	files := []cpioFile{
		{name: "/qemuguest/script", mode: 0o755, data: []byte("echo hi\n")},
		{name: "/etc/hosts", mode: 0o644, data: []byte("127.0.0.1 localhost\n")},
		{name: "/a/b/c/odd-length", mode: 0o600, data: []byte("12345")},
		{name: "/empty", mode: 0o644, data: nil},
	}
	var buf bytes.Buffer
	if err := writeCpio(&buf, files); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%4 != 0 {
		t.Errorf("archive length %d is not a multiple of 4", buf.Len())
	}
	var again bytes.Buffer
	if err := writeCpio(&again, []cpioFile{files[3], files[2], files[1], files[0]}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), again.Bytes()) {
		t.Error("the same files in another order gave another archive")
	}

	list := exec.Command("cpio", "-t", "-v", "--quiet")
	list.Stdin = bytes.NewReader(buf.Bytes())
	out, err := list.CombinedOutput()
	if err != nil {
		t.Fatalf("cpio -t: %v\n%s", err, out)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		got = append(got, f[0]+" "+f[len(f)-1])
	}
	want := []string{
		"drwxr-xr-x a", "drwxr-xr-x a/b", "drwxr-xr-x a/b/c", "-rw------- a/b/c/odd-length",
		"-rw-r--r-- empty", "drwxr-xr-x etc", "-rw-r--r-- etc/hosts",
		"drwxr-xr-x qemuguest", "-rwxr-xr-x qemuguest/script",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("cpio -tv lists\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	dir := t.TempDir()
	extract := exec.Command("cpio", "-i", "-d", "--quiet", "--no-absolute-filenames")
	extract.Dir = dir
	extract.Stdin = bytes.NewReader(buf.Bytes())
	if out, err := extract.CombinedOutput(); err != nil {
		t.Fatalf("cpio -i: %v\n%s", err, out)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			t.Error(err)
			continue
		}
		if !bytes.Equal(data, f.data) {
			t.Errorf("%s holds %q, want %q", f.name, data, f.data)
		}
	}
}

func TestWriteCpioRejects(t *testing.T) {
	for _, files := range [][]cpioFile{
		{{name: "relative"}},
		{{name: "/a/../b"}},
		{{name: "/"}},
		{{name: "/x"}, {name: "/x"}},
		{{name: "/x"}, {name: "/x/y"}},
	} {
		if err := writeCpio(&bytes.Buffer{}, files); err == nil {
			t.Errorf("%v: no error", files)
		}
	}
}
