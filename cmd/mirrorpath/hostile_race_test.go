//go:build race

package main

// raceRSS is what the race detector adds to hostileRSS: still below the
// 64 MiB that reading the smallest hostile file whole would take.
const raceRSS = 24 << 20
