/*
 * fold512mix's copying rounds replicated in C (crcfold_amd64.s, "Mixed
 * rounds"): per step four 64-byte blocks folded with carry-less multiplies
 * and five 8-byte words of each of four streams through the CRC32
 * instruction, over the whole rounds of a 16 KiB batch, into a log-sized
 * ring (three 256 KiB segments, as BenchmarkLimitRingFused) and into one hot
 * buffer. The variants: no stores at all (crc-only); the kernel's stores
 * (zmm-stores: the folded blocks as loaded, two 64-byte blocks of the
 * streams' bytes a step, the rest after the steps); the same with PREFETCHW
 * of the blocks 1 KiB ahead; the folded blocks stored in the steps and all
 * of the streams' bytes after them (V-then-streams); PREFETCHW of the blocks
 * 1 KiB and of the streams' bytes one round ahead (pfw-all). CPU time per
 * batch (the rounds cover 13312 of its 16363 bytes).
 *
 *   gcc -O2 -o mixed mixed.c && ./mixed
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static double cpu_ns(void){struct timespec t;clock_gettime(CLOCK_PROCESS_CPUTIME_ID,&t);return t.tv_sec*1e9+t.tv_nsec;}
#define T __attribute__((target("avx512f,avx512vl,vpclmulqdq,sse4.2"))) static
#define FOLD(a,d) a=_mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(a,k,0x00),_mm512_clmulepi64_epi128(a,k,0x11),d,0x96)
static volatile uint64_t sinkc;
static volatile __m512i sink;
// mixed: 8 steps a round, 4 streams of 320 bytes, V 2048 bytes; mode: 0 no stores, 1 the kernel's stores,
// 3 those with PREFETCHW of V 1 KiB ahead, 4 V in the steps and the streams after, 6 PREFETCHW of both
T void mixed(char*d,const char*s,size_t n,int mode){
 __m512i k=_mm512_set1_epi64(0x1234567),a0=_mm512_setzero_si512(),a1=a0,a2=a0,a3=a0; uint64_t c0=0,c1=0,c2=0,c3=0;
 size_t R=3328; ptrdiff_t dd=d-s;
 for(size_t r=0;r+R<=n;r+=R){ const char*st=s+r; const char*v=st+1280; const char*cp=st;
  for(int i=0;i<8;i++){
   if(mode==3){ for(int l=0;l<4;l++) _mm_prefetch(v+dd+1024+64*l,_MM_HINT_ET0);} 
   __m512i x=_mm512_loadu_si512(v),y=_mm512_loadu_si512(v+64),z=_mm512_loadu_si512(v+128),w=_mm512_loadu_si512(v+192);
   FOLD(a0,x);FOLD(a1,y);FOLD(a2,z);FOLD(a3,w);
   for(int j=0;j<40;j+=8){ c0=_mm_crc32_u64(c0,*(uint64_t*)(st+j)); c1=_mm_crc32_u64(c1,*(uint64_t*)(st+320+j)); c2=_mm_crc32_u64(c2,*(uint64_t*)(st+640+j)); c3=_mm_crc32_u64(c3,*(uint64_t*)(st+960+j)); }
   if(mode==1||mode==3){ _mm512_storeu_si512((void*)(v+dd),x);_mm512_storeu_si512((void*)(v+dd+64),y);_mm512_storeu_si512((void*)(v+dd+128),z);_mm512_storeu_si512((void*)(v+dd+192),w);
     _mm512_storeu_si512((void*)(cp+dd),_mm512_loadu_si512(cp)); _mm512_storeu_si512((void*)(cp+dd+64),_mm512_loadu_si512(cp+64)); }
   if(mode==4){ _mm512_storeu_si512((void*)(v+dd),x);_mm512_storeu_si512((void*)(v+dd+64),y);_mm512_storeu_si512((void*)(v+dd+128),z);_mm512_storeu_si512((void*)(v+dd+192),w);}
   if(mode==6){ for(int l=0;l<4;l++) _mm_prefetch(v+dd+1024+64*l,_MM_HINT_ET0); _mm_prefetch(cp+dd+3328,_MM_HINT_ET0); _mm_prefetch(cp+dd+3328+64,_MM_HINT_ET0);
     _mm512_storeu_si512((void*)(v+dd),x);_mm512_storeu_si512((void*)(v+dd+64),y);_mm512_storeu_si512((void*)(v+dd+128),z);_mm512_storeu_si512((void*)(v+dd+192),w);
     _mm512_storeu_si512((void*)(cp+dd),_mm512_loadu_si512(cp)); _mm512_storeu_si512((void*)(cp+dd+64),_mm512_loadu_si512(cp+64)); }
   v+=256; st+=40; cp+=128; }
  if(mode==4) for(cp=st-320;cp<st-320+1280;cp+=64) _mm512_storeu_si512((void*)(cp+dd),_mm512_loadu_si512(cp));
  if(mode && mode!=4) for(;cp<st-320+1280;cp+=64) _mm512_storeu_si512((void*)(cp+dd),_mm512_loadu_si512(cp));
  c0^=c1^c2^c3; c1=c2=c3=0; }
 sink=a0^a1^a2^a3; sinkc=c0; }
int main(int argc,char**argv){
 size_t n=16384,R=3*256*1024; char*s=aligned_alloc(4096,n),*r=aligned_alloc(4096,R+8192); memset(s,3,n); memset(r,1,R+8192);
 const char*nm[]={"crc-only","zmm-stores","","zmm+prefetchw","V-then-streams","","pfw-all"}; /* 2, 5: unused */
 for(int rep=0;rep<3;rep++) for(int m=0;m<7;m++){ if(m==2||m==5) continue; size_t pos=0; int it=200000; double t=cpu_ns();
  for(int j=0;j<it;j++){ mixed(r+pos+64,s+21,n-21,m); if((pos+=n)+n>R)pos=0; }
  double ring=(cpu_ns()-t)/it; t=cpu_ns(); for(int j=0;j<it;j++) mixed(r+64,s+21,n-21,m); double hot=(cpu_ns()-t)/it;
  printf("%-14s ring %.1f ns  hot %.1f ns\n",nm[m],ring,hot);} }
