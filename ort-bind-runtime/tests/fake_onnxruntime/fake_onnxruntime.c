/* A stand-in for the ONNX Runtime library, for the loader's refusals
 * (tests/library.rs): it exports `OrtGetApiBase` (unless NO_API_BASE is defined) whose
 * `GetVersionString` reports FAKE_VERSION and whose `GetApi` has no table to give. */
#include <stddef.h>

int fake_onnxruntime_marker(void) { return 0; }

#ifndef NO_API_BASE
#ifndef FAKE_VERSION
#define FAKE_VERSION "1.20.0"
#endif

typedef struct OrtApiBase {
    const void *(*GetApi)(unsigned int version);
    const char *(*GetVersionString)(void);
} OrtApiBase;

static const void *get_api(unsigned int version) {
    (void)version;
    return NULL;
}

static const char *get_version(void) { return FAKE_VERSION; }

static const OrtApiBase base = {get_api, get_version};

const OrtApiBase *OrtGetApiBase(void) { return &base; }
#endif
