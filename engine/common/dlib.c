#include "dlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

bool pq_dl_load(const char *what, const char *const *sonames, size_t n_sonames, const pq_dl_sym *syms, size_t n_syms,
                char *why, size_t why_cap)
{
    void *lib = NULL;
    for (size_t i = 0; !lib && i < n_sonames; i++) lib = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        snprintf(why, why_cap, "cannot load %s: %s", what, e ? e : "not found");
        return false;
    }
    for (size_t i = 0; i < n_syms; i++) {
        void *f = dlsym(lib, syms[i].name);
        if (!f) {
            snprintf(why, why_cap, "%s has no %s", what, syms[i].name);
            return false;
        }
        /* A function pointer has the size of a data pointer on every
         * platform dlsym works on (POSIX requires it). */
        memcpy(syms[i].slot, &f, sizeof f);
    }
    return true;
}
