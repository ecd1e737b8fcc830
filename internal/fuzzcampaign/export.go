package fuzzcampaign

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ArchiveName is the name OSS-Fuzz and ClusterFuzzLite give the fuzzer of
// a target, as .clusterfuzzlite/build.sh builds it: <package base>_<FuzzX>.
// Its seed archive is ArchiveName + "_seed_corpus.zip" beside the binary.
func (t Target) ArchiveName() string {
	return filepath.Base(t.Dir) + "_" + t.Name
}

// Exported is the seed archive written for one target.
type Exported struct {
	Target  Target
	Path    string // the zip; "" when the target had no seed
	Seeds   int    // entries in the zip
	Skipped []string
}

// Export captures the seeds of targets (captureSeeds: f.Add seeds and the
// testdata/fuzz files), encodes each for a libFuzzer harness of encoding enc
// and writes outDir/<ArchiveName>_seed_corpus.zip per target, one entry per
// seed named after it. A seed the harness cannot be given (ErrUnencodable)
// is left out and listed in Skipped. failed reports packages whose seed run
// failed; their archives hold what was captured.
func Export(ctx context.Context, modDir string, targets []Target, enc Encoding, outDir string) (out []Exported, failed map[string]error, err error) {
	if _, err := EncodeLibFuzzer(nil, enc); err != nil {
		return nil, nil, err
	}
	tmp, err := os.MkdirTemp("", "mirrorpath-export-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(tmp)
	caps, failed, err := captureSeeds(ctx, modDir, targets, nil, tmp)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, nil, err
	}
	for _, c := range caps {
		e := Exported{Target: c.Target}
		var entries [][2]string // name, raw input
		for _, name := range c.Files {
			b, err := os.ReadFile(filepath.Join(c.Dir, name))
			if err != nil {
				return nil, nil, err
			}
			vals, err := parseCorpusFile(b)
			if err != nil {
				return nil, nil, fmt.Errorf("%s %s: seed %s: %w", c.Target.Rel, c.Target.Name, name, err)
			}
			raw, err := EncodeLibFuzzer(vals, enc)
			if err != nil {
				e.Skipped = append(e.Skipped, name+": "+strings.TrimPrefix(err.Error(), ErrUnencodable.Error()+": "))
				continue
			}
			entries = append(entries, [2]string{name, string(raw)})
		}
		if len(entries) > 0 {
			e.Path = filepath.Join(outDir, c.Target.ArchiveName()+"_seed_corpus.zip")
			if err := writeZip(e.Path, entries); err != nil {
				return nil, nil, err
			}
			e.Seeds = len(entries)
		}
		out = append(out, e)
	}
	return out, failed, nil
}

func writeZip(path string, entries [][2]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(f)
	for _, e := range entries {
		w, err := zw.Create(e[0])
		if err != nil {
			f.Close()
			return err
		}
		if _, err := w.Write([]byte(e[1])); err != nil {
			f.Close()
			return err
		}
	}
	if err := zw.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
