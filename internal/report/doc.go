// Package report turns one run of the mirrorpath benchmarks and the scenario
// catalog into the figures the user asks for (docs/measuring.md): the cost of
// each PID strategy relative to storing batches as-is, the as-is path
// relative to the physical limit, and the fast producer-state store relative
// to the reference model; plus the scenario verdict matrix. It writes them as
// text tables, a report.md and self-contained SVG charts drawn by chart.go.
//
// Every ratio is computed from medians measured in the same run; nothing is
// compared with figures recorded elsewhere. Missing benchmarks (a package
// left out of the run, a benchmark renamed) leave cells empty and are listed
// as notes, so a partial run still gives a report.
//
// The files by job: figures.go reads benchmark output into Figures,
// tables.go divides them into the ratio tables, order.go orders their rows
// and columns, noise.go judges the run's noise, scenario.go reads the
// scenario results, chart.go and charts.go draw the SVG charts, markdown.go
// writes report.md and the text tables, rundir.go saves and loads a run
// directory's files, readme.go writes the text of the generated sections of
// README.md and the results pages, and sections.go finds and replaces
// those sections between their markers.
package report
