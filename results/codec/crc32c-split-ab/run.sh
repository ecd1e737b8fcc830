#!/bin/bash
# interleaved A/B: base = 26dc92b (CRC in codec), head = internal/crc32c
out=/tmp/h7ab/out; mkdir -p $out; : >$out/base.txt; : >$out/head.txt; : >$out/load.txt
crc='^(BenchmarkCRC|BenchmarkChecksumCopy|BenchmarkPatchCRC)$'
cod='^(BenchmarkParseVerify|BenchmarkRewritePID)$'
for i in $(seq 1 10); do
  cat /proc/loadavg >>$out/load.txt
  if [ $((i % 2)) = 1 ]; then order="base head"; else order="head base"; fi
  for side in $order; do
    if [ $side = base ]; then
      /tmp/h7ab/base.test -test.run '^$' -test.bench "$crc|$cod" -test.benchtime 100ms -test.benchmem >>$out/base.txt 2>&1
    else
      /tmp/h7ab/head-crc32c.test -test.run '^$' -test.bench "$crc" -test.benchtime 100ms -test.benchmem >>$out/head.txt 2>&1
      /tmp/h7ab/head-codec.test -test.run '^$' -test.bench "$cod" -test.benchtime 100ms -test.benchmem >>$out/head.txt 2>&1
    fi
  done
done
cat /proc/loadavg >>$out/load.txt
echo done >>$out/load.txt
