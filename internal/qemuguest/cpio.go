package qemuguest

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
)

// cpioFile is one regular file for a newc archive: name is absolute in the
// guest (/qemuguest/script).
type cpioFile struct {
	name string
	mode uint32 // permission bits
	data []byte
}

// writeCpio writes files as a newc ("070701") cpio archive, the format the
// kernel unpacks into its initramfs. Parent directories get entries of their
// own (the kernel creates nothing implicitly); entries come in name order and
// carry no time stamps, so the same files give the same archive. Appended to
// another archive, it adds to it: the kernel unpacks concatenated archives in
// turn, and a later file replaces an earlier one of the same name.
func writeCpio(w io.Writer, files []cpioFile) error {
	dirs := map[string]bool{}
	byName := map[string]cpioFile{}
	for _, f := range files {
		name := path.Clean(f.name)
		if !path.IsAbs(f.name) || name == "/" || name != f.name {
			return fmt.Errorf("qemuguest: guest file name %q is not a clean absolute path", f.name)
		}
		if _, dup := byName[name]; dup {
			return fmt.Errorf("qemuguest: guest file %s given twice", name)
		}
		byName[name] = f
		for d := path.Dir(name); d != "/"; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for d := range dirs {
		if _, clash := byName[d]; clash {
			return fmt.Errorf("qemuguest: guest file %s is also a directory", d)
		}
	}

	type entry struct {
		name string
		mode uint32
		data []byte
	}
	var entries []entry
	for d := range dirs {
		entries = append(entries, entry{d, 0o040755, nil})
	}
	for name, f := range byName {
		entries = append(entries, entry{name, 0o100000 | f.mode&0o7777, f.data})
	}
	// Parents before children: "/a" < "/a/b" in byte order.
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })

	bw := bufio.NewWriter(w)
	var off int64
	put := func(ino int, mode uint32, nlink int, name string, data []byte) {
		// 13 eight-digit hex fields: ino, mode, uid, gid, nlink, mtime,
		// filesize, devmajor, devminor, rdevmajor, rdevminor, namesize
		// (with the NUL), check.
		hdr := fmt.Sprintf("070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
			ino, mode, 0, 0, nlink, 0, len(data), 0, 0, 0, 0, len(name)+1, 0)
		n, _ := bw.WriteString(hdr)
		m, _ := bw.WriteString(name)
		_ = bw.WriteByte(0)
		off += int64(n + m + 1)
		pad(bw, &off)
		k, _ := bw.Write(data)
		off += int64(k)
		pad(bw, &off)
	}
	for i, e := range entries {
		nlink := 1
		if e.mode&0o040000 != 0 {
			nlink = 2
		}
		put(i+1, e.mode, nlink, strings.TrimPrefix(e.name, "/"), e.data)
	}
	put(0, 0, 1, "TRAILER!!!", nil)
	return bw.Flush() // bufio keeps the first write error
}

// pad writes zeros up to the next multiple of 4 octets.
func pad(w *bufio.Writer, off *int64) {
	for *off%4 != 0 {
		_ = w.WriteByte(0)
		*off++
	}
}
