/*===- LinkShims.c - glibc functions newer than a library's floor ---------===*
 *
 * Linked into every library rnn-compile's built-in linker writes (the link
 * kit's shims.o). The static C++ runtime of the kit calls arc4random
 * (std::random_device), which glibc has only since 2.36; this definition,
 * local to the library (its version script exports only rnnc_*), lets a
 * library link and load on glibc 2.35 too.
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <sys/random.h>

uint32_t arc4random(void) {
  uint32_t value = 0;
  while (getrandom(&value, sizeof value, 0) != sizeof value) {
  }
  return value;
}
