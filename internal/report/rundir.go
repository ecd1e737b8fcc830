package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// The files of a run directory (`mirrorpath run --out`, default
// results/run/): MetaFile holds the Report's fields, BenchFile and
// ScenarioFile the raw output. Load rebuilds the report from them alone.
const (
	MetaFile     = "run.json"
	BenchFile    = "bench.txt"
	ScenarioFile = "scenarios.jsonl"
	ReportFile   = "report.md"
)

// SaveMeta writes r's fields (not its figures) as dir/run.json.
func (r *Report) SaveMeta(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, MetaFile), append(b, '\n'), 0o644)
}

// LoadMeta reads dir/run.json alone: the Report's fields, no figures.
func LoadMeta(dir string) (*Report, error) {
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	r := &Report{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("report: %s: %w", filepath.Join(dir, MetaFile), err)
	}
	return r, nil
}

// Load rebuilds the report of a run directory from run.json and the raw
// files it lists.
func Load(dir string) (*Report, error) {
	r, err := LoadMeta(dir)
	if err != nil {
		return nil, err
	}
	if slices.Contains(r.RawFiles, BenchFile) {
		fh, err := os.Open(filepath.Join(dir, BenchFile))
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		defer fh.Close()
		if r.Figures, err = ParseBench(fh, BenchFile); err != nil {
			return nil, fmt.Errorf("report: %s: %w", filepath.Join(dir, BenchFile), err)
		}
	}
	if slices.Contains(r.RawFiles, ScenarioFile) {
		fh, err := os.Open(filepath.Join(dir, ScenarioFile))
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		defer fh.Close()
		if r.Matrix, err = ParseScenarios(fh); err != nil {
			return nil, fmt.Errorf("report: %s: %w", filepath.Join(dir, ScenarioFile), err)
		}
		r.Matrix.ShortenFiles()
	}
	return r, nil
}

// WriteReportFile writes dir/report.md from r.
func (r *Report) WriteReportFile(dir string) error {
	f, err := os.Create(filepath.Join(dir, ReportFile))
	if err != nil {
		return err
	}
	if err := r.writeMarkdown(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
