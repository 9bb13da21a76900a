/* shared.c: libblk.so's own translation unit; everything in it comes from
 * the runtime library linked whole (CMakeLists.txt, BLK_SHARED_LIB). */
#include "blk.h"
