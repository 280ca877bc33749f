// Emulates tidal bench's latency sequence: per size, raw point, vendor point, tidal point, trims.
#include <tidal/tidal.h>
#include <pthread.h>
#include <sched.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
using Clock = std::chrono::steady_clock;
static double now(){return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();}
static double point(tidal_context *ctx, size_t size, bool pin) {
  cpu_set_t before; pthread_getaffinity_np(pthread_self(),sizeof before,&before);
  if (pin){cpu_set_t one; CPU_ZERO(&one); CPU_SET(sched_getcpu(),&one); pthread_setaffinity_np(pthread_self(),sizeof one,&one);}
  tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT; d.kind = TIDAL_KIND_DEVICE; d.tag="tidal-bench"; d.device=0;
  auto pair=[&]{void*p; if(tidal_alloc(ctx,size,&d,&p)||tidal_free(ctx,p)) {puts(tidal_last_error()); std::exit(1);} };
  pair(); double w0=now(); pair(); double one=now()-w0;
  unsigned batch = (unsigned)std::clamp(200e-6/std::max(one,1e-9),1.0,1000.0);
  std::vector<double> runs; double t0=now();
  while (runs.size()<25 && (runs.size()<3 || now()-t0<0.25)) { double c0=now(); for(unsigned i=0;i<batch;++i) pair(); runs.push_back((now()-c0)/batch*1e9); }
  pthread_setaffinity_np(pthread_self(),sizeof before,&before);
  std::sort(runs.begin(),runs.end()); return runs[runs.size()/2];
}
int main(int argc,char**argv){
  bool raw_on=true, vendor_on=true, trim_on=true, pin=true;
  for(int i=1;i<argc;++i){ if(!strcmp(argv[i],"--no-raw"))raw_on=false; if(!strcmp(argv[i],"--no-vendor"))vendor_on=false; if(!strcmp(argv[i],"--no-trim"))trim_on=false; if(!strcmp(argv[i],"--no-pin"))pin=false;}
  tidal_context *raw,*ven,*tid;
  tidal_context_create_from_string("runtime=\"cuda\"\nlog_level=\"error\"\n[pool]\nenabled=false\n",&raw);
  tidal_context_create_from_string("runtime=\"cuda\"\nlog_level=\"error\"\n[pool]\nbackend=\"vendor\"\n",&ven);
  tidal_context_create_from_string("runtime=\"cuda\"\nlog_level=\"error\"\n",&tid);
  printf("raw %d vendor %d trim %d pin %d:", raw_on, vendor_on, trim_on, pin);
  for (size_t s : {size_t(256), size_t(65536), size_t(4)<<20, size_t(256)<<20}) {
    if (raw_on) point(raw,s,pin);
    if (vendor_on) point(ven,s,pin);
    printf(" %.1f", point(tid,s,pin));
    if (trim_on){ tidal_pool_trim(raw,nullptr); tidal_pool_trim(tid,nullptr);}
  }
  printf("\n");
}
