#include <tidal/tidal.h>
#include <pthread.h>
#include <sched.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>
using Clock = std::chrono::steady_clock;
static double med(std::vector<double> v){std::sort(v.begin(),v.end());return v[v.size()/2];}
static double measure(tidal_context *ctx, size_t size, const char *tag, int dev, int batch, bool fn){
  tidal_alloc_desc d = TIDAL_ALLOC_DESC_INIT; d.kind = TIDAL_KIND_DEVICE; d.tag = tag; d.device = dev;
  auto pair = [&]{ void *p; if (tidal_alloc(ctx,size,&d,&p)||tidal_free(ctx,p)) std::abort(); };
  std::function<void(int)> f = [&](int n){ for(int i=0;i<n;++i) pair(); };
  std::vector<double> r;
  for (int rep=0; rep<40; ++rep){ auto t0=Clock::now(); if (fn) f(batch); else for(int i=0;i<batch;++i) pair();
    r.push_back(std::chrono::duration<double,std::nano>(Clock::now()-t0).count()/batch); }
  return med(r);
}
int main(int argc, char**argv){
  const char *rt = argc>1?argv[1]:"cuda";
  char cfg[256]; snprintf(cfg,sizeof cfg,"runtime = \"%s\"\nlog_level = \"error\"\n",rt);
  tidal_context *ctx; if (tidal_context_create_from_string(cfg,&ctx)) {puts(tidal_last_error());return 1;}
  cpu_set_t one; CPU_ZERO(&one); CPU_SET(sched_getcpu(),&one); pthread_setaffinity_np(pthread_self(),sizeof one,&one);
  for (size_t size : {size_t(256), size_t(256)<<20}) {
    measure(ctx,size,nullptr,-1,20000,false);
    printf("%9zu plain %.1f | tag %.1f | dev0 %.1f | tag+dev0 %.1f | fn1000 %.1f | fn1000+tag+dev0 %.1f | b1000 %.1f\n", size,
      measure(ctx,size,nullptr,-1,20000,false), measure(ctx,size,"tidal-bench",-1,20000,false),
      measure(ctx,size,nullptr,0,20000,false), measure(ctx,size,"tidal-bench",0,20000,false),
      measure(ctx,size,nullptr,-1,1000,true), measure(ctx,size,"tidal-bench",0,1000,true),
      measure(ctx,size,nullptr,-1,1000,false));
  }
  // more contexts alive, as tidal bench has
  tidal_context *c2,*c3; tidal_context_create_from_string(cfg,&c2); tidal_context_create_from_string(cfg,&c3);
  measure(c3,256,nullptr,-1,20000,false);
  printf("4 contexts: plain %.1f tag+dev0 %.1f\n", measure(c3,256,nullptr,-1,20000,false), measure(c3,256,"tidal-bench",0,20000,false));
  return 0;
}
