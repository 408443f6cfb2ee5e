# Read by ctest itself before it runs any test (the root directory's TEST_INCLUDE_FILES), so
# every test, ours and the bindings', inherits what it sets.
#
# OMP_WAIT_POLICY=PASSIVE: an OpenMP thread with no work sleeps instead of spin-waiting. ctest
# runs tests side by side (scripts/test.sh: one job per core), each with LibTorch's intra-op
# pool (OMP_NUM_THREADS=2 in ours, so that parallel kernels are exercised), so the pools
# outnumber the cores, and a spinning thread keeps a core from a thread with work. Measured on
# 2 cores, two test_tft_model processes at once: 106.2 s spinning, 16.9 s passive, 13.8 s with
# one thread each. A policy set by the caller wins.
if(NOT DEFINED ENV{OMP_WAIT_POLICY})
  set(ENV{OMP_WAIT_POLICY} PASSIVE)
endif()
