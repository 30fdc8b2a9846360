// Package keyfile reads and writes the signing keys of firmware images
// and loads the trust set a verifier checks them against.
//
// A private key file holds one PEM block "RNIC ED25519 PRIVATE KEY" whose
// 32 octets are the Ed25519 seed (RFC 8032 5.1.5's private key); a public
// key file holds one or more PEM blocks "RNIC ED25519 PUBLIC KEY" of 32
// octets each (RFC 8032 5.1.5's public key). PKCS#8 "PRIVATE KEY" and
// PKIX "PUBLIC KEY" blocks of Ed25519 keys (what openssl genpkey
// -algorithm ed25519 and openssl pkey -pubout write) are read too.
//
// Private key files are written with mode 0600 and refused on read when
// their group or others have any permission; trust set files and their
// directory are refused when group or others may write them.
package keyfile

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openrnic/rnic/firmware"
)

// PEM block types of the project's own key files.
const (
	PrivateBlock = "RNIC ED25519 PRIVATE KEY"
	PublicBlock  = "RNIC ED25519 PUBLIC KEY"
)

// PermissionError refuses a key file, or a trust set file or directory,
// whose permissions let others read a secret or change what is trusted.
type PermissionError struct {
	Path string
	Mode fs.FileMode
	What string // "private key", "trust set file", "trust set directory"
}

func (e *PermissionError) Error() string {
	var who []string
	if e.What == "private key" {
		if e.Mode&0o070 != 0 {
			who = append(who, "its group")
		}
		if e.Mode&0o007 != 0 {
			who = append(who, "others")
		}
		return fmt.Sprintf("%s: private key file has mode %04o (%v): %s may use it; a private key must be for its owner only: run chmod 600 %s",
			e.Path, e.Mode.Perm(), e.Mode, strings.Join(who, " and "), e.Path)
	}
	return fmt.Sprintf("%s: %s has mode %04o (%v): its group or others may change which keys are trusted; run chmod go-w %s",
		e.Path, e.What, e.Mode.Perm(), e.Mode, e.Path)
}

// WritePrivate writes priv's seed to path with mode 0600. It never
// replaces an existing file unless force is set.
func WritePrivate(path string, priv ed25519.PrivateKey, force bool) error {
	if len(priv) != ed25519.PrivateKeySize {
		return fmt.Errorf("%s: not an Ed25519 private key", path)
	}
	return writeNew(path, pem.EncodeToMemory(&pem.Block{Type: PrivateBlock, Bytes: priv.Seed()}), 0o600, force)
}

// WritePublic writes pub to path with mode 0644, never replacing an
// existing file unless force is set.
func WritePublic(path string, pub ed25519.PublicKey, force bool) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("%s: not an Ed25519 public key", path)
	}
	return writeNew(path, EncodePublic(pub), 0o644, force)
}

// EncodePublic is pub as a public key file's PEM block.
func EncodePublic(pub ed25519.PublicKey) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: PublicBlock, Bytes: pub})
}

// writeNew creates path (O_EXCL) with exactly mode perm, whatever the
// umask, and writes b; with force an existing file is removed first.
func writeNew(path string, b []byte, perm fs.FileMode, force bool) error {
	if force {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists: not overwriting a key file (give --force to replace it, or choose another name)", path)
	}
	if err != nil {
		return err
	}
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ReadPrivate reads a private key file, refusing one that its group or
// others have any permission on (*PermissionError).
func ReadPrivate(path string) (ed25519.PrivateKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The mode of the file opened, not of a name that may change meanwhile.
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%v): give the private key file rnic-loader keygen wrote", path, fi.Mode().Type())
	}
	b, err := readSmall(f, path)
	if err != nil {
		return nil, err
	}
	blk, rest := pem.Decode(b)
	if blk == nil {
		return nil, fmt.Errorf("%s: no PEM block: not a key file (rnic-loader keygen --out %s writes one)", path, path)
	}
	if blk.Type == PublicBlock || blk.Type == "PUBLIC KEY" {
		return nil, fmt.Errorf("%s is a public key: signing needs the private key (the file without .pub)", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, &PermissionError{Path: path, Mode: fi.Mode(), What: "private key"}
	}
	if len(bytes.TrimSpace(rest)) != 0 {
		return nil, fmt.Errorf("%s: text after the key's PEM block: a private key file holds one key", path)
	}
	if len(blk.Headers) != 0 {
		return nil, fmt.Errorf("%s: the PEM block has headers; %s blocks have none", path, blk.Type)
	}
	switch blk.Type {
	case PrivateBlock:
		if len(blk.Bytes) != ed25519.SeedSize {
			return nil, fmt.Errorf("%s: %s of %d octets, not the %d of an Ed25519 seed", path, PrivateBlock, len(blk.Bytes), ed25519.SeedSize)
		}
		return ed25519.NewKeyFromSeed(blk.Bytes), nil
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: PKCS#8 private key: %v", path, err)
		}
		if priv, ok := k.(ed25519.PrivateKey); ok {
			return priv, nil
		}
		return nil, fmt.Errorf("%s: a PKCS#8 %T, not an Ed25519 key: images are signed with Ed25519 only", path, k)
	}
	return nil, fmt.Errorf("%s: PEM block %q is not a private key this tool reads (%s, or PKCS#8 \"PRIVATE KEY\" holding an Ed25519 key)", path, blk.Type, PrivateBlock)
}

// maxKeyFile bounds what is read as a key or trust set file.
const maxKeyFile = 1 << 20

func readSmall(f *os.File, path string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("%s: more than %d octets: not a key file", path, maxKeyFile)
	}
	return b, nil
}

// ReadPublic reads the public keys of a public key file (one or more PEM
// blocks). It refuses a private key, so that a secret never ends up in a
// trust set.
func ReadPublic(path string) ([]ed25519.PublicKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readSmall(f, path)
	if err != nil {
		return nil, err
	}
	return parsePublic(path, b)
}

func parsePublic(path string, b []byte) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	for {
		blk, rest := pem.Decode(b)
		if blk == nil {
			if len(bytes.TrimSpace(b)) != 0 {
				return nil, fmt.Errorf("%s: text that is not a PEM block after key %d: a public key file holds %s blocks only", path, len(keys), PublicBlock)
			}
			break
		}
		b = rest
		switch blk.Type {
		case PublicBlock:
			if len(blk.Bytes) != ed25519.PublicKeySize {
				return nil, fmt.Errorf("%s: %s of %d octets, not the %d of an Ed25519 public key", path, PublicBlock, len(blk.Bytes), ed25519.PublicKeySize)
			}
			keys = append(keys, ed25519.PublicKey(slices.Clone(blk.Bytes)))
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(blk.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%s: PKIX public key: %v", path, err)
			}
			pub, ok := k.(ed25519.PublicKey)
			if !ok {
				return nil, fmt.Errorf("%s: a PKIX %T, not an Ed25519 key: images are signed with Ed25519 only", path, k)
			}
			keys = append(keys, pub)
		case PrivateBlock, "PRIVATE KEY":
			return nil, fmt.Errorf("%s holds a private key: a trust set holds public keys only (KEY.pub); move the private key out and keep it secret", path)
		default:
			return nil, fmt.Errorf("%s: PEM block %q is not a public key this tool reads (%s, or PKIX \"PUBLIC KEY\" of an Ed25519 key)", path, blk.Type, PublicBlock)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no public key in it (rnic-loader keygen writes KEY.pub)", path)
	}
	return keys, nil
}

// LoadTrust loads a trust set from path: a directory, whose *.pub and
// *.pem files are read (other names are skipped), or one file listing
// public keys. An empty trust set is refused (firmware.NoTrustedKeys), and
// so is a directory or file its group or others may write.
func LoadTrust(path string) (*firmware.TrustSet, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("trust set: %w", err)
	}
	t := firmware.NewTrustSet()
	files := []string{path}
	if fi.IsDir() {
		if fi.Mode().Perm()&0o022 != 0 {
			return nil, &PermissionError{Path: path, Mode: fi.Mode(), What: "trust set directory"}
		}
		ents, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("trust set: %w", err)
		}
		files = files[:0]
		for _, e := range ents {
			n := e.Name()
			if strings.HasSuffix(n, ".pub") || strings.HasSuffix(n, ".pem") {
				files = append(files, filepath.Join(path, n))
			}
		}
	}
	for _, p := range files {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("trust set: %w", err)
		}
		if !fi.Mode().IsRegular() {
			continue
		}
		if fi.Mode().Perm()&0o022 != 0 {
			return nil, &PermissionError{Path: p, Mode: fi.Mode(), What: "trust set file"}
		}
		keys, err := ReadPublic(p)
		if err != nil {
			return nil, fmt.Errorf("trust set: %w", err)
		}
		for _, k := range keys {
			if _, err := t.Add(k, p); err != nil {
				return nil, err
			}
		}
	}
	if t.Len() == 0 {
		return nil, &firmware.Error{Kind: firmware.NoTrustedKeys, Field: "trust set",
			Msg: fmt.Sprintf("%s holds no public keys (*.pub or *.pem files): copy the signer's KEY.pub (from rnic-loader keygen) into it", path)}
	}
	return t, nil
}

// SystemTrustDir is the trust set every user of the host shares, the last
// place Locate looks.
const SystemTrustDir = "/etc/rnic/trusted-keys"

// EnvTrusted is the environment variable that names a trust set.
const EnvTrusted = "RNIC_TRUSTED_KEYS"

// Locator finds the trust set to use, in this order: the path given on the
// command line (Flag), $RNIC_TRUSTED_KEYS, $XDG_CONFIG_HOME/rnic/trusted-keys
// ($HOME/.config/rnic/trusted-keys without XDG_CONFIG_HOME) when it exists,
// SystemDir when it exists. The first two are used as given, existing or
// not: a path a user names is never silently passed over.
type Locator struct {
	Flag      string
	Getenv    func(string) string
	SystemDir string // SystemTrustDir; tests give another
}

// NotConfiguredError says that no trust set was given and none exists in
// the default places.
type NotConfiguredError struct{ Looked []string }

func (e *NotConfiguredError) Error() string {
	return fmt.Sprintf("no trust set: give --trusted DIR or FILE, set %s, or put the signers' public keys (KEY.pub from rnic-loader keygen) in %s (looked there and found nothing)",
		EnvTrusted, strings.Join(e.Looked, " or "))
}

// Locate returns the trust set's path and where that came from ("--trusted",
// "$RNIC_TRUSTED_KEYS", "default").
func (l Locator) Locate() (path, from string, err error) {
	if l.Flag != "" {
		return l.Flag, "--trusted", nil
	}
	if p := l.Getenv(EnvTrusted); p != "" {
		return p, "$" + EnvTrusted, nil
	}
	var looked []string
	cfg := l.Getenv("XDG_CONFIG_HOME")
	if cfg == "" {
		if home := l.Getenv("HOME"); home != "" {
			cfg = filepath.Join(home, ".config")
		}
	}
	if cfg != "" {
		looked = append(looked, filepath.Join(cfg, "rnic", "trusted-keys"))
	}
	if l.SystemDir != "" {
		looked = append(looked, l.SystemDir)
	}
	for _, p := range looked {
		if _, err := os.Stat(p); err == nil {
			return p, "default", nil
		}
	}
	return "", "", &NotConfiguredError{Looked: looked}
}
