//go:build !race

package main

// raceRSS is what the race detector adds to hostileRSS; nothing without it.
const raceRSS = 0
