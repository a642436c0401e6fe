#ifndef SAVEDESK_CMALLOC_SHIM_H
#define SAVEDESK_CMALLOC_SHIM_H
// glibc's malloc tuning (mallopt and its parameters), which Swift's Glibc module leaves out.
#include <malloc.h>
#endif
