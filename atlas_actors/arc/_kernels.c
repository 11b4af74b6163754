/* Compiled kernels for the ARC DSL's hottest grid primitives.
 *
 * Each function here computes exactly what a pure numpy/Python function in
 * atlas_actors/arc/grids.py computes (that one stays the reference, is what a
 * program exported with Program.to_python carries, and is used when this module
 * is not built).  atlas_actors/arc/kernels.py wraps these into drop-in
 * replacements; tests/arc/test_kernels.py compares the two on random grids.
 *
 * Grids arrive as C-contiguous buffers of 64-bit integers (cells) or bytes
 * (masks), at most 30x30 in the DSL but any size is handled.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int get_cells(PyObject *obj, Py_buffer *view, Py_ssize_t n, Py_ssize_t itemsize) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    if (view->itemsize != itemsize || view->len != n * itemsize) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_ValueError, "expected %zd cells of %zd bytes, got %zd bytes",
                     n, itemsize, view->len);
        return -1;
    }
    return 0;
}

/* Label the connected components of g's non-background cells (see label()):
 * lab[i] = object index in reading order of first cell, -1 for background.
 * stack is scratch of n cells.  Returns the number of objects. */
static int32_t label_cells(const int64_t *g, Py_ssize_t h, Py_ssize_t w, int conn, int by_color,
                           long long bg, int32_t *lab, int32_t *stack) {
    Py_ssize_t n = h * w;
    static const int dy8[8] = {-1, -1, -1, 0, 0, 1, 1, 1}, dx8[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
    static const int dy4[4] = {-1, 0, 0, 1}, dx4[4] = {0, -1, 1, 0};
    const int *dy = conn == 8 ? dy8 : dy4, *dx = conn == 8 ? dx8 : dx4;
    int nn = conn == 8 ? 8 : 4;
    for (Py_ssize_t i = 0; i < n; i++) lab[i] = -1;
    int32_t count = 0;
    for (Py_ssize_t start = 0; start < n; start++) {
        if (lab[start] >= 0 || g[start] == bg) continue;
        int64_t c0 = g[start];
        lab[start] = count;
        Py_ssize_t top = 0;
        stack[top++] = (int32_t)start;
        while (top) {
            int32_t p = stack[--top];
            Py_ssize_t y = p / w, x = p % w;
            for (int k = 0; k < nn; k++) {
                Py_ssize_t ny = y + dy[k], nx = x + dx[k];
                if (ny < 0 || ny >= h || nx < 0 || nx >= w) continue;
                Py_ssize_t q = ny * w + nx;
                if (lab[q] < 0 && g[q] != bg && (!by_color || g[q] == c0)) {
                    lab[q] = count;
                    stack[top++] = (int32_t)q;
                }
            }
        }
        count++;
    }
    return count;
}

/* Group the labelled cells by object: offs[k]..offs[k+1] (offs zeroed, count + 1
 * long) index object k's cells in cells (n long), each group in reading order
 * (a counting sort).  Returns the number of labelled cells. */
static Py_ssize_t group_cells(const int32_t *lab, Py_ssize_t n, int32_t count, Py_ssize_t *offs,
                              int32_t *cells) {
    for (Py_ssize_t i = 0; i < n; i++)
        if (lab[i] >= 0) offs[lab[i] + 1]++;
    for (int32_t k = 0; k < count; k++) offs[k + 1] += offs[k];
    Py_ssize_t *at = offs; /* filled in place, then shifted back */
    for (Py_ssize_t i = 0; i < n; i++)
        if (lab[i] >= 0) cells[at[lab[i]]++] = (int32_t)i;
    for (int32_t k = count; k > 0; k--) offs[k] = offs[k - 1];
    offs[0] = 0;
    return offs[count];
}

/* label(cells: int64 buffer, h, w, conn, by_color, bg)
 *   -> (ys: bytearray of int64, xs: bytearray of int64,
 *       objects: list of (start, end, top, bottom, left, right))
 *
 * The connected components of the non-background cells, 4- or 8-connected; with
 * by_color a component has one colour.  Objects come in reading order of their
 * first cell and each object's cells in reading order: object i's row and column
 * indices are ys[start:end] and xs[start:end] (as int64 arrays). */
static PyObject *label(PyObject *self, PyObject *args) {
    PyObject *obj;
    Py_ssize_t h, w;
    int conn, by_color;
    long long bg;
    if (!PyArg_ParseTuple(args, "OnniiL", &obj, &h, &w, &conn, &by_color, &bg)) return NULL;
    if (h < 0 || w < 0) return PyErr_Format(PyExc_ValueError, "negative shape");
    Py_ssize_t n = h * w;
    Py_buffer view;
    if (get_cells(obj, &view, n, 8) < 0) return NULL;
    const int64_t *g = (const int64_t *)view.buf;

    int32_t *lab = malloc(sizeof(int32_t) * (n ? n : 1));
    int32_t *stack = malloc(sizeof(int32_t) * (n ? n : 1));
    if (!lab || !stack) {
        free(lab);
        free(stack);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    int32_t count = label_cells(g, h, w, conn, by_color, bg, lab, stack);
    PyBuffer_Release(&view);

    /* stack is reused for the cells grouped by object */
    Py_ssize_t *offs = calloc((size_t)count + 1, sizeof(Py_ssize_t));
    if (!offs) {
        free(lab);
        free(stack);
        return PyErr_NoMemory();
    }
    Py_ssize_t cells = group_cells(lab, n, count, offs, stack);
    PyObject *ys = PyByteArray_FromStringAndSize(NULL, cells * 8);
    PyObject *xs = PyByteArray_FromStringAndSize(NULL, cells * 8);
    PyObject *objs = PyList_New(count);
    if (!ys || !xs || !objs) goto fail;
    int64_t *yb = (int64_t *)PyByteArray_AS_STRING(ys), *xb = (int64_t *)PyByteArray_AS_STRING(xs);
    for (int32_t k = 0; k < count; k++) {
        int64_t left = w, right = -1;
        for (Py_ssize_t c = offs[k]; c < offs[k + 1]; c++) {
            int64_t x = stack[c] % w;
            yb[c] = stack[c] / w;
            xb[c] = x;
            if (x < left) left = x;
            if (x > right) right = x;
        }
        /* top and bottom: the rows of the first and last cells */
        PyObject *t = Py_BuildValue("(nnLLLL)", offs[k], offs[k + 1], (long long)yb[offs[k]],
                                    (long long)yb[offs[k + 1] - 1], (long long)left,
                                    (long long)right);
        if (!t) goto fail;
        PyList_SET_ITEM(objs, k, t);
    }
    free(lab);
    free(stack);
    free(offs);
    return Py_BuildValue("(NNN)", ys, xs, objs);
fail:
    Py_XDECREF(ys);
    Py_XDECREF(xs);
    Py_XDECREF(objs);
    free(lab);
    free(stack);
    free(offs);
    return NULL;
}

/* enclosed(free: byte buffer of 0/1, h, w) -> bytearray of 0/1
 *
 * The cells of the boolean mask ``free`` that are not 4-connected to the grid's
 * border through ``free``. */
static PyObject *enclosed(PyObject *self, PyObject *args) {
    PyObject *obj;
    Py_ssize_t h, w;
    if (!PyArg_ParseTuple(args, "Onn", &obj, &h, &w)) return NULL;
    if (h < 0 || w < 0) return PyErr_Format(PyExc_ValueError, "negative shape");
    Py_ssize_t n = h * w;
    Py_buffer view;
    if (get_cells(obj, &view, n, 1) < 0) return NULL;
    const uint8_t *free_ = (const uint8_t *)view.buf;
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n);
    int32_t *stack = malloc(sizeof(int32_t) * (n ? n : 1));
    if (!out || !stack) {
        Py_XDECREF(out);
        free(stack);
        PyBuffer_Release(&view);
        return out ? PyErr_NoMemory() : NULL;
    }
    uint8_t *res = (uint8_t *)PyByteArray_AS_STRING(out);
    /* res: 1 = free and not yet reached; 0 = blocked or reached from the border */
    for (Py_ssize_t i = 0; i < n; i++) res[i] = free_[i] != 0;
    PyBuffer_Release(&view);
    Py_ssize_t top = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t y = i / w, x = i % w;
        if (res[i] && (y == 0 || y == h - 1 || x == 0 || x == w - 1)) {
            res[i] = 0;
            stack[top++] = (int32_t)i;
        }
    }
    static const int dy[4] = {-1, 0, 0, 1}, dx[4] = {0, -1, 1, 0};
    while (top) {
        int32_t p = stack[--top];
        Py_ssize_t y = p / w, x = p % w;
        for (int k = 0; k < 4; k++) {
            Py_ssize_t ny = y + dy[k], nx = x + dx[k];
            if (ny < 0 || ny >= h || nx < 0 || nx >= w) continue;
            Py_ssize_t q = ny * w + nx;
            if (res[q]) {
                res[q] = 0;
                stack[top++] = (int32_t)q;
            }
        }
    }
    free(stack);
    return out;
}


/* ray_paint(src: byte buffer of 0/1, free: byte buffer of 0/1, h, w,
 *           dirs: sequence of (dy, dx), stop) -> bytearray of 0/1
 *
 * The free cells rays reach, rays going from the src cells in each direction
 * (dy, dx).  A free cell p is painted when, walking back from p against the
 * direction, some source is met: with stop, only up to and including the first
 * non-free cell (along a row or column only a non-free source counts; along a
 * diagonal a free source met on the way counts too); without stop, anywhere. */
static PyObject *ray_paint(PyObject *self, PyObject *args) {
    PyObject *sobj, *fobj, *dirs;
    Py_ssize_t h, w;
    int stop;
    if (!PyArg_ParseTuple(args, "OOnnOi", &sobj, &fobj, &h, &w, &dirs, &stop)) return NULL;
    if (h < 0 || w < 0) return PyErr_Format(PyExc_ValueError, "negative shape");
    Py_ssize_t n = h * w;
    PyObject *seq = PySequence_Fast(dirs, "dirs must be a sequence of (dy, dx)");
    if (!seq) return NULL;
    Py_ssize_t nd = PySequence_Fast_GET_SIZE(seq);
    int dys[16], dxs[16];
    if (nd > 16) {
        Py_DECREF(seq);
        return PyErr_Format(PyExc_ValueError, "at most 16 directions");
    }
    for (Py_ssize_t k = 0; k < nd; k++) {
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, k), "ii", &dys[k], &dxs[k])) {
            Py_DECREF(seq);
            return NULL;
        }
    }
    Py_DECREF(seq);
    Py_buffer sv, fv;
    if (get_cells(sobj, &sv, n, 1) < 0) return NULL;
    if (get_cells(fobj, &fv, n, 1) < 0) {
        PyBuffer_Release(&sv);
        return NULL;
    }
    const uint8_t *src = (const uint8_t *)sv.buf, *fr = (const uint8_t *)fv.buf;
    PyObject *out = PyByteArray_FromStringAndSize(NULL, n);
    if (!out) {
        PyBuffer_Release(&sv);
        PyBuffer_Release(&fv);
        return NULL;
    }
    uint8_t *paint = (uint8_t *)PyByteArray_AS_STRING(out);
    memset(paint, 0, (size_t)n);
    for (Py_ssize_t k = 0; k < nd; k++) {
        int dy = dys[k], dx = dxs[k];
        int diag = dy != 0 && dx != 0;
        if (dy == 0 && dx == 0) continue;
        for (Py_ssize_t y = 0; y < h; y++)
            for (Py_ssize_t x = 0; x < w; x++) {
                Py_ssize_t p = y * w + x;
                if (paint[p] || !fr[p]) continue;
                Py_ssize_t qy = y - dy, qx = x - dx;
                while (qy >= 0 && qy < h && qx >= 0 && qx < w) {
                    Py_ssize_t q = qy * w + qx;
                    if (stop) {
                        if (src[q] && (diag || !fr[q])) {
                            paint[p] = 1;
                            break;
                        }
                        if (!fr[q]) break;
                    } else if (src[q]) {
                        paint[p] = 1;
                        break;
                    }
                    qy -= dy;
                    qx -= dx;
                }
            }
    }
    PyBuffer_Release(&sv);
    PyBuffer_Release(&fv);
    return out;
}

/* fall(a: writable int64 buffer, h, w, conn, bg, max_objects) -> objects
 *
 * object_gravity toward the bottom, in place: the objects (conn-connected
 * non-background cells, colours joined) fall as rigid bodies, the lowest first
 * (ties in reading order of first cell), each until a cell of it rests on the
 * bottom edge or on another cell.  With more than max_objects objects the grid is
 * left as it is.  Returns the number of objects. */
static PyObject *fall(PyObject *self, PyObject *args) {
    PyObject *obj;
    Py_ssize_t h, w, max_objects;
    int conn;
    long long bg;
    if (!PyArg_ParseTuple(args, "OnniLn", &obj, &h, &w, &conn, &bg, &max_objects)) return NULL;
    if (h < 0 || w < 0) return PyErr_Format(PyExc_ValueError, "negative shape");
    Py_ssize_t n = h * w;
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) return NULL;
    if (view.itemsize != 8 || view.len != n * 8) {
        PyBuffer_Release(&view);
        return PyErr_Format(PyExc_ValueError, "expected %zd int64 cells", n);
    }
    int64_t *a = (int64_t *)view.buf;
    int32_t *lab = malloc(sizeof(int32_t) * (n ? n : 1));
    int32_t *stack = malloc(sizeof(int32_t) * (n ? n : 1));
    int32_t *cells = malloc(sizeof(int32_t) * (n ? n : 1));
    int64_t *vals = malloc(sizeof(int64_t) * (n ? n : 1));
    Py_ssize_t *offs = NULL;
    int32_t *order = NULL, *bottom = NULL;
    int32_t count = -1;
    if (!lab || !stack || !cells || !vals) goto done;
    count = label_cells(a, h, w, conn, 0, bg, lab, stack);
    if (count > max_objects || count == 0) goto done;
    offs = calloc((size_t)count + 1, sizeof(Py_ssize_t));
    order = malloc(sizeof(int32_t) * count);
    bottom = malloc(sizeof(int32_t) * count);
    if (!offs || !order || !bottom) {
        count = -1;
        goto done;
    }
    group_cells(lab, n, count, offs, cells);
    for (int32_t k = 0; k < count; k++) bottom[k] = (int32_t)(cells[offs[k + 1] - 1] / w);
    /* the lowest objects first, ties in label order: a stable insertion sort */
    for (int32_t k = 0; k < count; k++) {
        int32_t j = k;
        while (j > 0 && bottom[order[j - 1]] < bottom[k]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = k;
    }
    for (int32_t oi = 0; oi < count; oi++) {
        int32_t k = order[oi];
        for (Py_ssize_t c = offs[k]; c < offs[k + 1]; c++) {
            vals[c] = a[cells[c]];
            a[cells[c]] = bg;
        }
        Py_ssize_t step = h;
        for (Py_ssize_t c = offs[k]; c < offs[k + 1]; c++) {
            Py_ssize_t y = cells[c] / w, x = cells[c] % w, r = y + 1;
            while (r < h && a[r * w + x] == bg) r++;
            if (r - y - 1 < step) step = r - y - 1;
        }
        for (Py_ssize_t c = offs[k]; c < offs[k + 1]; c++) a[cells[c] + step * w] = vals[c];
    }
done:
    free(lab);
    free(stack);
    free(cells);
    free(vals);
    free(offs);
    free(order);
    free(bottom);
    PyBuffer_Release(&view);
    if (count < 0) return PyErr_NoMemory();
    return PyLong_FromLong(count);
}

static PyMethodDef methods[] = {
    {"label", label, METH_VARARGS, "Connected components of a grid's non-background cells."},
    {"enclosed", enclosed, METH_VARARGS, "Free cells not 4-connected to the border."},
    {"fall", fall, METH_VARARGS, "object_gravity toward the bottom, in place."},
    {"ray_paint", ray_paint, METH_VARARGS, "Free cells rays from the source cells reach."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels",
                                    "Compiled kernels for the ARC DSL's grid primitives.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__kernels(void) {
    PyObject *m = PyModule_Create(&module);
    /* the interface version atlas_actors/arc/grids.py checks (KERNELS_VERSION) */
    if (m && PyModule_AddIntConstant(m, "VERSION", 1) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
