/* libffi built with autotools and hookcc (tests/tests/buildsystems.rs): ffi_call calls add()
 * through libffi's own assembly 10 times; prints 145. */
#include <ffi.h>
#include <stdio.h>

int add(int a, int b)
{
    return a + b;
}

int main(void)
{
    ffi_cif cif;
    ffi_type *types[2] = {&ffi_type_sint, &ffi_type_sint};
    if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 2, &ffi_type_sint, types) != FFI_OK)
        return 1;
    int total = 0;
    for (int i = 0; i < 10; i++) {
        int a = i, b = 10;
        void *values[2] = {&a, &b};
        ffi_arg result;
        ffi_call(&cif, FFI_FN(add), &result, values);
        total += (int)result;
    }
    printf("%d\n", total);
    return 0;
}
