package keyfile

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/openrnic/rnic/firmware"
)

func newKey(t *testing.T) ed25519.PrivateKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// TestPrivateRoundTrip: a key written is read back the same, with mode
// 0600 exactly whatever the umask, and the file is the documented PEM
// block of the 32-octet seed.
func TestPrivateRoundTrip(t *testing.T) {
	for _, umask := range []int{0o022, 0o000, 0o077} {
		old := syscall.Umask(umask)
		path := filepath.Join(t.TempDir(), "key")
		priv := newKey(t)
		err := WritePrivate(path, priv, false)
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		if m := mode(t, path); m != 0o600 {
			t.Errorf("umask %03o: private key written with mode %04o, want 0600", umask, m)
		}
		got, err := ReadPrivate(path)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(priv) {
			t.Error("read back another key")
		}
		b, _ := os.ReadFile(path)
		blk, rest := pem.Decode(b)
		if blk == nil || blk.Type != "RNIC ED25519 PRIVATE KEY" || len(blk.Bytes) != 32 || len(rest) != 0 || string(blk.Bytes) != string(priv.Seed()) {
			t.Errorf("file is not one PEM block of the seed:\n%s", b)
		}
	}
}

// TestNoOverwrite: an existing key is never replaced without force, and
// the refusal says how to replace it.
func TestNoOverwrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "key")
	first := newKey(t)
	if err := WritePrivate(path, first, false); err != nil {
		t.Fatal(err)
	}
	err := WritePrivate(path, newKey(t), false)
	if err == nil || !strings.Contains(err.Error(), "exists: not overwriting a key file (give --force") {
		t.Fatalf("second write: %v", err)
	}
	if got, _ := ReadPrivate(path); !got.Equal(first) {
		t.Fatal("the refused write changed the key")
	}
	second := newKey(t)
	if err := WritePrivate(path, second, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadPrivate(path); !got.Equal(second) {
		t.Error("force did not replace the key")
	}
	// A public key is not overwritten either.
	pub := filepath.Join(t.TempDir(), "key.pub")
	if err := WritePublic(pub, first.Public().(ed25519.PublicKey), false); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, pub); m != 0o644 {
		t.Errorf("public key mode %04o, want 0644", m)
	}
	if err := WritePublic(pub, second.Public().(ed25519.PublicKey), false); err == nil {
		t.Error("public key overwritten")
	}
}

// TestLoosePermissions: a private key any group or other bit is set on is
// refused, and the message names the file, its mode and the chmod fix.
func TestLoosePermissions(t *testing.T) {
	dir := t.TempDir()
	for _, perm := range []fs.FileMode{0o640, 0o604, 0o644, 0o660, 0o601, 0o610, 0o602, 0o620, 0o777} {
		path := filepath.Join(dir, "key-"+perm.String())
		if err := WritePrivate(path, newKey(t), false); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, perm); err != nil {
			t.Fatal(err)
		}
		_, err := ReadPrivate(path)
		var pe *PermissionError
		if !errors.As(err, &pe) {
			t.Fatalf("mode %04o: %v, want a *PermissionError", perm, err)
		}
		msg := err.Error()
		for _, want := range []string{fmt.Sprintf("%s: private key file has mode %04o (%v)", path, perm, perm), "run chmod 600 " + path} {
			if !strings.Contains(msg, want) {
				t.Errorf("mode %04o: %q does not say %q", perm, msg, want)
			}
		}
		if perm&0o070 != 0 && !strings.Contains(msg, "its group") || perm&0o007 != 0 && !strings.Contains(msg, "others") {
			t.Errorf("mode %04o: %q does not say who may use it", perm, msg)
		}
	}
	// Owner-only modes are fine.
	for _, perm := range []fs.FileMode{0o400, 0o600, 0o700} {
		path := filepath.Join(dir, "ok-"+perm.String())
		if err := WritePrivate(path, newKey(t), false); err != nil {
			t.Fatal(err)
		}
		os.Chmod(path, perm)
		if _, err := ReadPrivate(path); err != nil {
			t.Errorf("mode %04o: %v", perm, err)
		}
	}
}

func TestReadPrivateRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	priv := newKey(t)
	pubPEM := string(EncodePublic(priv.Public().(ed25519.PublicKey)))
	seedPEM := string(pem.EncodeToMemory(&pem.Block{Type: PrivateBlock, Bytes: priv.Seed()}))
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	cases := []struct {
		name, text, want string
	}{
		{"empty", "", "no PEM block: not a key file"},
		{"public", pubPEM, "is a public key: signing needs the private key"},
		{"short seed", string(pem.EncodeToMemory(&pem.Block{Type: PrivateBlock, Bytes: priv.Seed()[:31]})), "of 31 octets, not the 32 of an Ed25519 seed"},
		{"two keys", seedPEM + seedPEM, "text after the key's PEM block"},
		{"headers", string(pem.EncodeToMemory(&pem.Block{Type: PrivateBlock, Headers: map[string]string{"Proc-Type": "4,ENCRYPTED"}, Bytes: priv.Seed()})), "has headers"},
		{"ecdsa", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER})), "not an Ed25519 key"},
		{"rsa block", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n", `PEM block "RSA PRIVATE KEY" is not a private key this tool reads`},
	}
	for _, c := range cases {
		if _, err := ReadPrivate(write(c.name, c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := ReadPrivate(dir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory: %v", err)
	}
}

// TestPKCS8AndPKIX: keys in the standard containers (openssl genpkey
// -algorithm ed25519; openssl pkey -pubout) are read as well.
func TestPKCS8AndPKIX(t *testing.T) {
	dir := t.TempDir()
	priv := newKey(t)
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	kp := filepath.Join(dir, "k.pem")
	os.WriteFile(kp, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600)
	got, err := ReadPrivate(kp)
	if err != nil || !got.Equal(priv) {
		t.Fatalf("PKCS#8: %v", err)
	}
	pder, _ := x509.MarshalPKIXPublicKey(priv.Public())
	trust := filepath.Join(dir, "trust")
	os.Mkdir(trust, 0o755)
	os.WriteFile(filepath.Join(trust, "k.pem"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pder}), 0o644)
	ts, err := LoadTrust(trust)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := ts.Lookup(firmware.KeyIDOf(priv.Public().(ed25519.PublicKey))); !ok {
		t.Error("PKIX public key not in the trust set")
	}
}

// TestLoadTrust: a directory's *.pub and *.pem files, or one file listing
// several keys; other names skipped; the refusals.
func TestLoadTrust(t *testing.T) {
	dir := t.TempDir()
	a, b, c := newKey(t), newKey(t), newKey(t)
	os.WriteFile(filepath.Join(dir, "a.pub"), EncodePublic(a.Public().(ed25519.PublicKey)), 0o644)
	both := append(EncodePublic(b.Public().(ed25519.PublicKey)), EncodePublic(c.Public().(ed25519.PublicKey))...)
	os.WriteFile(filepath.Join(dir, "bc.pem"), both, 0o644)
	os.WriteFile(filepath.Join(dir, "README"), []byte("not a key"), 0o644)
	os.Mkdir(filepath.Join(dir, "old.pub"), 0o755) // a directory so named is skipped
	ts, err := LoadTrust(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Len() != 3 {
		t.Errorf("%d keys, want 3", ts.Len())
	}
	k, ok := ts.Lookup(firmware.KeyIDOf(c.Public().(ed25519.PublicKey)))
	if !ok || k.Source != filepath.Join(dir, "bc.pem") {
		t.Errorf("second key of bc.pem: %v %q", ok, k.Source)
	}
	// One file.
	ts, err = LoadTrust(filepath.Join(dir, "bc.pem"))
	if err != nil || ts.Len() != 2 {
		t.Errorf("file: %v, %d keys", err, ts.Len())
	}

	refusals := []struct {
		name  string
		setup func(d string)
		kind  firmware.Kind
		want  string
	}{
		{"empty directory", func(d string) {}, firmware.NoTrustedKeys, "holds no public keys (*.pub or *.pem files): copy the signer's KEY.pub"},
		{"only other files", func(d string) { os.WriteFile(filepath.Join(d, "notes.txt"), nil, 0o644) }, firmware.NoTrustedKeys, "holds no public keys"},
		{"private key in it", func(d string) {
			WritePrivate(filepath.Join(d, "oops.pem"), a, false)
		}, 0, "holds a private key: a trust set holds public keys only"},
		{"garbage .pub", func(d string) { os.WriteFile(filepath.Join(d, "x.pub"), []byte("hello"), 0o644) }, 0, "text that is not a PEM block after key 0"},
		{"empty .pub", func(d string) { os.WriteFile(filepath.Join(d, "x.pub"), nil, 0o644) }, 0, "no public key in it"},
		{"short key", func(d string) {
			os.WriteFile(filepath.Join(d, "x.pub"), pem.EncodeToMemory(&pem.Block{Type: PublicBlock, Bytes: make([]byte, 31)}), 0o644)
		}, 0, "of 31 octets, not the 32"},
		{"group-writable file", func(d string) {
			p := filepath.Join(d, "a.pub")
			os.WriteFile(p, EncodePublic(a.Public().(ed25519.PublicKey)), 0o644)
			os.Chmod(p, 0o664)
		}, 0, "trust set file has mode 0664 (-rw-rw-r--): its group or others may change which keys are trusted; run chmod go-w"},
		{"world-writable directory", func(d string) {
			os.WriteFile(filepath.Join(d, "a.pub"), EncodePublic(a.Public().(ed25519.PublicKey)), 0o644)
			os.Chmod(d, 0o757)
		}, 0, "trust set directory has mode 0757"},
	}
	for _, r := range refusals {
		d := filepath.Join(t.TempDir(), "trust")
		os.Mkdir(d, 0o755)
		r.setup(d)
		_, err := LoadTrust(d)
		if err == nil || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: %v, want %q", r.name, err, r.want)
			continue
		}
		if r.kind != 0 && firmware.KindOf(err) != r.kind {
			t.Errorf("%s: kind %v, want %v", r.name, firmware.KindOf(err), r.kind)
		}
	}
	if _, err := LoadTrust(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing: %v", err)
	}
}

// TestLocate: --trusted, then $RNIC_TRUSTED_KEYS, then the user's and the
// system's directories when they exist; named paths are used even when
// they do not exist (LoadTrust then says so).
func TestLocate(t *testing.T) {
	root := t.TempDir()
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	sys := filepath.Join(root, "etc-rnic")
	l := Locator{Getenv: getenv, SystemDir: sys}
	check := func(name string, l Locator, wantPath, wantFrom string) {
		t.Helper()
		p, from, err := l.Locate()
		if err != nil || p != wantPath || from != wantFrom {
			t.Errorf("%s: %q from %q, %v; want %q from %q", name, p, from, err, wantPath, wantFrom)
		}
	}
	_, _, err := l.Locate()
	var nc *NotConfiguredError
	if !errors.As(err, &nc) || !strings.Contains(err.Error(), sys) {
		t.Errorf("nothing configured: %v", err)
	}
	env["HOME"] = filepath.Join(root, "home")
	_, _, err = l.Locate()
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "home", ".config", "rnic", "trusted-keys")+" or "+sys) {
		t.Errorf("nothing configured, with HOME: %v", err)
	}
	os.MkdirAll(sys, 0o755)
	check("system", l, sys, "default")
	user := filepath.Join(root, "home", ".config", "rnic", "trusted-keys")
	os.MkdirAll(user, 0o755)
	check("user over system", l, user, "default")
	env["XDG_CONFIG_HOME"] = filepath.Join(root, "xdg")
	check("XDG_CONFIG_HOME unset dir falls to system", l, sys, "default")
	xdg := filepath.Join(root, "xdg", "rnic", "trusted-keys")
	os.MkdirAll(xdg, 0o755)
	check("XDG_CONFIG_HOME", l, xdg, "default")
	env[EnvTrusted] = "/nonexistent/env"
	check("env over defaults", l, "/nonexistent/env", "$RNIC_TRUSTED_KEYS")
	l.Flag = "/nonexistent/flag"
	check("flag over env", l, "/nonexistent/flag", "--trusted")
}
