package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// manifestName is the manifest's file name inside the corpus directory.
const manifestName = "MANIFEST.tsv"

// writeManifest rewrites MANIFEST.tsv from the files on disk: one row per good segment
// (<dir>/<client>-<case>/00000000000000000000.log) and one per malformed file (<dir>/malformed/*.log).
// Rows are sorted, and notes hold nothing that changes between runs, so the manifest is stable.
func writeManifest(dir string) error {
	var rows [][]string
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	about := map[string]string{}
	for _, s := range specs() {
		about[s.name] = s.about
	}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "malformed" || e.Name() == "gen" {
			continue
		}
		seg, err := os.ReadFile(filepath.Join(dir, e.Name(), segmentName))
		if err != nil {
			continue // not a case directory
		}
		client, name, _ := strings.Cut(e.Name(), "-")
		bs, err := split(seg)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
		notes := about[name]
		if f := facts(bs); f != "" {
			notes += "; " + f
		}
		rows = append(rows, row(e.Name()+"/"+segmentName, client, bs, len(seg), notes))
	}
	known := map[string]defect{}
	for _, d := range defects() {
		known[d.name] = d
	}
	mal, _ := filepath.Glob(filepath.Join(dir, "malformed", "*.log"))
	for _, p := range mal {
		seg, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimSuffix(filepath.Base(p), ".log")
		d, ok := known[name]
		if !ok {
			return fmt.Errorf("malformed/%s.log: no such defect; remove the stale file", name)
		}
		bs, _ := split(seg) // the framing error, if any, is the defect
		notes := fmt.Sprintf("%s; from %s batch %d", d.about, d.source, d.batch)
		rows = append(rows, row("malformed/"+name+".log", "handmade", bs, len(seg), notes))
	}
	slices.SortFunc(rows, func(a, b []string) int { return strings.Compare(a[0], b[0]) })

	var buf bytes.Buffer
	buf.WriteString("case\tclient\tcodec\tbatches\trecords\tbytes\tnotes\n")
	for _, r := range rows {
		buf.WriteString(strings.Join(r, "\t"))
		buf.WriteByte('\n')
	}
	return os.WriteFile(filepath.Join(dir, manifestName), buf.Bytes(), 0o644)
}

// row is one manifest row. batches counts the batches the framing loop yields; records sums their
// recordsCount fields as written (a malformed file's header may lie about it).
func row(path, client string, bs []batchView, size int, notes string) []string {
	var records int64
	var codecs []string
	for _, b := range bs {
		records += int64(b.recordsCount())
		if b.control() {
			continue
		}
		if c := b.codec().String(); !slices.Contains(codecs, c) {
			codecs = append(codecs, c)
		}
	}
	if len(codecs) == 0 {
		codecs = append(codecs, "none")
	}
	return []string{path, client, strings.Join(codecs, "+"), fmt.Sprint(len(bs)), fmt.Sprint(records),
		fmt.Sprint(size), notes}
}

// facts summarises the header fields in which clients differ: producer id and epoch, base sequences,
// attributes, leader epoch, marker type, and the framing of the first compressed payload.
func facts(bs []batchView) string {
	var (
		f                   []string
		pids, epochs, attrs []string
		seqs, ples, markers []string
		ids                 []string // distinct producer ids: counted, never printed (they may change)
		framing             string
	)
	add := func(list *[]string, v string) {
		if !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, b := range bs {
		add(&ples, fmt.Sprint(b.leaderEpoch()))
		if b.control() {
			markers = append(markers, markerFacts(b))
			continue
		}
		pid := "-1"
		if b.producerID() >= 0 {
			pid = ">=0"
		}
		add(&pids, pid)
		add(&ids, fmt.Sprint(b.producerID()))
		add(&epochs, fmt.Sprint(b.producerEpoch()))
		add(&attrs, fmt.Sprintf("0x%04x", b.attributes()))
		seqs = append(seqs, fmt.Sprint(b.baseSequence()))
		if framing == "" && b.codec() != codecNone {
			framing = payloadFraming(b.codec(), b.payload())
		}
	}
	if len(pids) > 0 {
		if len(ids) > 1 {
			f = append(f, fmt.Sprintf("producers=%d", len(ids)))
		}
		f = append(f, "pid="+strings.Join(pids, ","), "epoch="+strings.Join(epochs, ","),
			"baseSeq="+strings.Join(seqs, ","), "attrs="+strings.Join(attrs, ","))
	}
	f = append(f, "ple="+strings.Join(ples, ","))
	f = append(f, markers...)
	if framing != "" {
		f = append(f, framing)
	}
	return strings.Join(f, " ")
}

// markerFacts describes a control batch: its type from the first record's key, attributes and sequence.
func markerFacts(b batchView) string {
	kind := "control"
	if key, ok := firstRecordKey(b); ok && len(key) == 4 {
		switch binary.BigEndian.Uint16(key[2:]) {
		case 0:
			kind = "ABORT"
		case 1:
			kind = "COMMIT"
		}
	}
	return fmt.Sprintf("marker=%s(attrs=0x%04x,baseSeq=%d,epoch=%d)", kind, b.attributes(), b.baseSequence(),
		b.producerEpoch())
}

// firstRecordKey returns the key of the first record of an uncompressed batch.
func firstRecordKey(b batchView) ([]byte, bool) {
	p := b.payload()
	if _, n := binary.Varint(p); n > 0 { // record length
		p = p[n:]
	} else {
		return nil, false
	}
	if len(p) < 1 {
		return nil, false
	}
	p = p[1:]     // attributes
	for range 2 { // timestampDelta, offsetDelta
		_, n := binary.Varint(p)
		if n <= 0 {
			return nil, false
		}
		p = p[n:]
	}
	kl, n := binary.Varint(p)
	if n <= 0 || kl < 0 || int64(len(p)-n) < kl {
		return nil, false
	}
	return p[n : n+int(kl)], true
}

// payloadFraming names the stream format of a compressed records section, from its first bytes.
func payloadFraming(c codec, p []byte) string {
	switch c {
	case codecSnappy:
		if bytes.HasPrefix(p, []byte("\x82SNAPPY\x00")) && len(p) >= 16 {
			return fmt.Sprintf("snappy=xerial(version=%d,compat=%d)", binary.BigEndian.Uint32(p[8:]),
				binary.BigEndian.Uint32(p[12:]))
		}
		return "snappy=raw-block"
	case codecLZ4:
		if len(p) >= 6 && binary.LittleEndian.Uint32(p) == 0x184D2204 {
			flg, bd := p[4], p[5]
			blocks := map[byte]string{4: "64KiB", 5: "256KiB", 6: "1MiB", 7: "4MiB"}
			return fmt.Sprintf("lz4=frame(FLG=0x%02x,BD=0x%02x:block=%s,indep=%t,blockCRC=%t,size=%t,contentCRC=%t)",
				flg, bd, blocks[bd>>4&7], flg&0x20 != 0, flg&0x10 != 0, flg&0x08 != 0, flg&0x04 != 0)
		}
		return "lz4=not-a-frame"
	case codecGzip:
		if len(p) >= 10 && p[0] == 0x1f && p[1] == 0x8b {
			return fmt.Sprintf("gzip=(FLG=0x%02x,XFL=0x%02x,OS=%d)", p[3], p[8], p[9])
		}
		return "gzip=not-gzip"
	case codecZstd:
		if len(p) >= 5 && binary.LittleEndian.Uint32(p) == 0xFD2FB528 {
			fhd := p[4]
			return fmt.Sprintf("zstd=frame(FHD=0x%02x,singleSegment=%t,checksum=%t,contentSizeFlag=%d)",
				fhd, fhd&0x20 != 0, fhd&0x04 != 0, fhd>>6)
		}
		return "zstd=not-a-frame"
	}
	return ""
}
