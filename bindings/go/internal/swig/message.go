package swig

/*
#include <stdint.h>
#include <stdlib.h>

// The message copy whose address the wrapper's panic carries (see tftrain.i).
static char* tftgo_message_at(uint64_t address) { return (char*)(uintptr_t)address; }
*/
import "C"

import "unsafe"

// takeMessage copies and frees the malloc'd message at address.
func takeMessage(address uint64) string {
	p := C.tftgo_message_at(C.uint64_t(address))
	message := C.GoString(p)
	C.free(unsafe.Pointer(p))
	return message
}
