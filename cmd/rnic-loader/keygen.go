package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/openrnic/rnic/firmware"
	"github.com/openrnic/rnic/firmware/keyfile"
)

type keygenJSON struct {
	Schema     string `json:"schema"`
	PrivateKey string `json:"private_key"`
	PublicKey  string `json:"public_key"`
	KeyID      string `json:"key_id"`
}

func newKeygenCmd() *cobra.Command {
	var (
		out   string
		force bool
		json  bool
	)
	c := &cobra.Command{
		Use:   "keygen --out KEY",
		Short: "Make an Ed25519 key pair for signing images",
		Long: `keygen makes an Ed25519 signing key pair: the private key in KEY, written
with mode 0600 (owner only: sign refuses a key file its group or others
may read), and the public key in KEY.pub. It prints the key id, the
SHA-256 of the public key, which every image the key signs carries.

Copy KEY.pub into the trust set of every host that verifies images
(--trusted, $RNIC_TRUSTED_KEYS or ~/.config/rnic/trusted-keys/) and into
the device's golden image; keep KEY secret and off the hosts that only
verify. keygen never overwrites a key file unless --force is given.

--json prints one record (schema "rnic-loader/keygen/1"): schema,
private_key, public_key (the files' paths), key_id (64 hex digits).

Exit status: 0 success, 1 failure (e.g. KEY exists), 2 usage error.`,
		Example: `  rnic-loader keygen --out release.key
  rnic-loader keygen --out release.key --json
  cp release.key.pub ~/.config/rnic/trusted-keys/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out KEY: say where to write the private key (the public key goes to KEY.pub)")
			}
			pubPath := out + ".pub"
			if !force {
				for _, p := range []string{out, pubPath} {
					if _, err := os.Lstat(p); err == nil {
						return fmt.Errorf("%s exists: not overwriting a key file (give --force to replace it, or choose another name)", p)
					}
				}
			}
			pub, priv, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				return err
			}
			if err := keyfile.WritePrivate(out, priv, force); err != nil {
				return err
			}
			if err := keyfile.WritePublic(pubPath, pub, force); err != nil {
				return err
			}
			id := firmware.KeyIDOf(pub)
			w := cmd.OutOrStdout()
			if json {
				return writeJSON(w, keygenJSON{Schema: "rnic-loader/keygen/1", PrivateKey: out, PublicKey: pubPath, KeyID: id.String()})
			}
			fmt.Fprintf(w, "private key  %s (mode 0600: keep it secret)\n", out)
			fmt.Fprintf(w, "public key   %s (copy it into the trust set of the hosts and devices that accept its images)\n", pubPath)
			fmt.Fprintf(w, "key id       %s\n", id)
			return nil
		},
	}
	c.Flags().StringVarP(&out, "out", "o", "", "the private key file to write; the public key goes to the same name with .pub")
	c.Flags().BoolVar(&force, "force", false, "replace existing key files (the old key is lost)")
	c.Flags().BoolVar(&json, "json", false, "print one JSON record instead of text")
	return c
}
