module github.com/openrnic/rnic

go 1.26.0

require (
	github.com/gopacket/gopacket v1.7.7
	github.com/rogpeppe/go-internal v1.16.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/u-root/u-root v0.16.0
	golang.org/x/sys v0.49.0
)

require (
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	golang.org/x/net v0.55.0 // indirect
	golang.org/x/tools v0.38.0 // indirect
)
