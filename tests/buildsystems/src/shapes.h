#ifndef SHAPES_H
#define SHAPES_H
#ifdef __cplusplus
extern "C" {
#endif
int shapes_area(int side);
int shapes_total(int n);
#ifdef __cplusplus
}
#endif
#endif
