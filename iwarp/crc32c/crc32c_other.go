//go:build !amd64 || purego

package crc32c

import "hash/crc32"

// No folding path here: hash/crc32 uses the CPU's CRC instructions where
// it has them.
var hasCLMUL = false
var useCLMUL = false

func update(crc uint32, p []byte) uint32 { return crc32.Update(crc, Table, p) }

func updateCLMUL(crc uint32, p []byte) uint32 { panic("crc32c: no folding path on this platform") }
