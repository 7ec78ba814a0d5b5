/* The learner's two inner loops in C, each with a pure-Python twin that is used when
 * this did not build (tests check that the twins agree):
 *
 * - dp: the middle of the pairwise URL alignment (align.py: _dp_py). Both fill the same
 *   matrix with the same double arithmetic and walk the same traceback (diagonal, then
 *   left, then up), so they return identical results.
 * - near / add: the simhash block index (clusters.py: SimhashBlocks), packed 8 bytes a
 *   simhash, little-endian.
 *
 * dp(xs, ys, p, score) -> (S[mm][nn], pairs, i, j)
 *   xs, ys: column keys (frozenset, type bits, single token or None) of the middles
 *   p:      offset of the middles (common prefix length), added to the pair indexes
 *   score:  align.score, called only for columns holding several tokens
 *   pairs:  the traceback's pairs (1-based, 0 = gap), last first
 *   i, j:   where the traceback left the middle (p + row, p + column)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdlib.h>
#include <string.h>

static int unpack(PyObject *list, Py_ssize_t n, long *bits, PyObject **single) {
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *t = PyList_GET_ITEM(list, k);
        if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != 3) {
            PyErr_SetString(PyExc_TypeError, "column key must be a 3-tuple");
            return -1;
        }
        bits[k] = PyLong_AsLong(PyTuple_GET_ITEM(t, 1));
        if (bits[k] == -1 && PyErr_Occurred()) return -1;
        PyObject *s = PyTuple_GET_ITEM(t, 2);
        single[k] = (s == Py_None) ? NULL : s;
    }
    return 0;
}

static int append_pair(PyObject *pairs, Py_ssize_t a, Py_ssize_t b) {
    PyObject *t = Py_BuildValue("(nn)", a, b);
    if (t == NULL) return -1;
    int r = PyList_Append(pairs, t);
    Py_DECREF(t);
    return r;
}

static PyObject *dp(PyObject *self, PyObject *args) {
    PyObject *xs, *ys, *score;
    Py_ssize_t p;
    if (!PyArg_ParseTuple(args, "O!O!nO", &PyList_Type, &xs, &PyList_Type, &ys, &p, &score)) return NULL;
    Py_ssize_t mm = PyList_GET_SIZE(xs), nn = PyList_GET_SIZE(ys), w = nn + 1;
    PyObject *result = NULL, *pairs = NULL;
    long *xb = malloc(sizeof(long) * (mm + 1)), *yb = malloc(sizeof(long) * (nn + 1));
    PyObject **xsg = malloc(sizeof(PyObject *) * (mm + 1)), **ysg = malloc(sizeof(PyObject *) * (nn + 1));
    double *S = calloc((size_t)(mm + 1) * w, sizeof(double));
    double *F = calloc((size_t)(mm + 1) * w, sizeof(double));
    if (!xb || !yb || !xsg || !ysg || !S || !F) {
        PyErr_NoMemory();
        goto done;
    }
    if (unpack(xs, mm, xb, xsg) < 0 || unpack(ys, nn, yb, ysg) < 0) goto done;
    for (Py_ssize_t i = 1; i <= mm; i++) {
        double *prev = S + (i - 1) * w, *cur = S + i * w, *f = F + i * w;
        double left = 0.0;
        for (Py_ssize_t j = 1; j <= nn; j++) {
            double v;
            if (!(xb[i - 1] & yb[j - 1])) {
                v = -1.0;
            } else if (xsg[i - 1] != NULL && ysg[j - 1] != NULL) {
                PyObject *a = xsg[i - 1], *b = ysg[j - 1];
                int eq = (a == b);
                if (!eq) {
                    eq = PyObject_RichCompareBool(a, b, Py_EQ);
                    if (eq < 0) goto done;
                }
                v = eq ? 1.0 : 0.0;
            } else {
                PyObject *r = PyObject_CallFunctionObjArgs(score, PyList_GET_ITEM(xs, i - 1), PyList_GET_ITEM(ys, j - 1), NULL);
                if (r == NULL) goto done;
                v = PyFloat_AsDouble(r);
                Py_DECREF(r);
                if (v == -1.0 && PyErr_Occurred()) goto done;
            }
            f[j] = v;
            double d = prev[j - 1] + v;
            if (left > d) d = left;
            if (prev[j] > d) d = prev[j];
            cur[j] = d;
            left = d;
        }
    }
    pairs = PyList_New(0);
    if (pairs == NULL) goto done;
    Py_ssize_t i = mm, j = nn;
    while (i > 0 && j > 0) {
        double c = S[i * w + j];
        if (c == S[(i - 1) * w + j - 1] + F[i * w + j]) {
            if (append_pair(pairs, p + i, p + j) < 0) goto done;
            i--;
            j--;
        } else if (c == S[i * w + j - 1]) {
            if (append_pair(pairs, 0, p + j) < 0) goto done;
            j--;
        } else {
            if (append_pair(pairs, p + i, 0) < 0) goto done;
            i--;
        }
    }
    result = Py_BuildValue("(dOnn)", S[mm * w + nn], pairs, p + i, p + j);
done:
    Py_XDECREF(pairs);
    free(xb);
    free(yb);
    free(xsg);
    free(ysg);
    free(S);
    free(F);
    return result;
}

static unsigned long long load64(const unsigned char *b) {
    unsigned long long v = 0;
    for (int k = 7; k >= 0; k--) v = (v << 8) | b[k];
    return v;
}

static void store64(unsigned char *b, unsigned long long v) {
    for (int k = 0; k < 8; k++) b[k] = (unsigned char)(v >> (8 * k));
}

/* near(slots, idx, sh, dist) -> {simhash: distance} over the slots at idx */
static PyObject *near(PyObject *self, PyObject *args) {
    PyObject *slots, *idx;
    unsigned long long sh;
    int dist;
    if (!PyArg_ParseTuple(args, "O!OKi", &PyList_Type, &slots, &idx, &sh, &dist)) return NULL;
    PyObject *seq = PySequence_Fast(idx, "idx must be a sequence");
    if (seq == NULL) return NULL;
    PyObject *out = PyDict_New();
    if (out == NULL) goto fail;
    for (Py_ssize_t n = 0; n < PySequence_Fast_GET_SIZE(seq); n++) {
        Py_ssize_t i = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(seq, n));
        if (i == -1 && PyErr_Occurred()) goto fail;
        if (i < 0 || i >= PyList_GET_SIZE(slots)) {
            PyErr_SetString(PyExc_IndexError, "slot out of range");
            goto fail;
        }
        PyObject *packed = PyList_GET_ITEM(slots, i);
        if (packed == Py_None) continue;
        if (!PyBytes_Check(packed)) {
            PyErr_SetString(PyExc_TypeError, "slot must be bytes or None");
            goto fail;
        }
        const unsigned char *b = (const unsigned char *)PyBytes_AS_STRING(packed);
        Py_ssize_t len = PyBytes_GET_SIZE(packed) / 8;
        for (Py_ssize_t k = 0; k < len; k++) {
            unsigned long long other = load64(b + 8 * k);
            int d = __builtin_popcountll(sh ^ other);
            if (d <= dist) {
                PyObject *key = PyLong_FromUnsignedLongLong(other), *val = PyLong_FromLong(d);
                int r = (key && val) ? PyDict_SetItem(out, key, val) : -1;
                Py_XDECREF(key);
                Py_XDECREF(val);
                if (r < 0) goto fail;
            }
        }
    }
    Py_DECREF(seq);
    return out;
fail:
    Py_DECREF(seq);
    Py_XDECREF(out);
    return NULL;
}

/* add(slots, idx, sh, maxper): move or append sh to the end of each slot, keep the newest maxper */
static PyObject *add(PyObject *self, PyObject *args) {
    PyObject *slots, *idx;
    unsigned long long sh;
    Py_ssize_t maxper;
    if (!PyArg_ParseTuple(args, "O!OKn", &PyList_Type, &slots, &idx, &sh, &maxper)) return NULL;
    PyObject *seq = PySequence_Fast(idx, "idx must be a sequence");
    if (seq == NULL) return NULL;
    for (Py_ssize_t n = 0; n < PySequence_Fast_GET_SIZE(seq); n++) {
        Py_ssize_t i = PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(seq, n));
        if (i == -1 && PyErr_Occurred()) goto fail;
        if (i < 0 || i >= PyList_GET_SIZE(slots)) {
            PyErr_SetString(PyExc_IndexError, "slot out of range");
            goto fail;
        }
        PyObject *packed = PyList_GET_ITEM(slots, i);
        Py_ssize_t len = 0;
        const unsigned char *b = NULL;
        if (packed != Py_None) {
            if (!PyBytes_Check(packed)) {
                PyErr_SetString(PyExc_TypeError, "slot must be bytes or None");
                goto fail;
            }
            b = (const unsigned char *)PyBytes_AS_STRING(packed);
            len = PyBytes_GET_SIZE(packed) / 8;
        }
        /* the kept entries, oldest first, without sh; then sh */
        Py_ssize_t skip = -1;
        for (Py_ssize_t k = 0; k < len; k++)
            if (load64(b + 8 * k) == sh) {
                skip = k;
                break;
            }
        Py_ssize_t kept = len - (skip >= 0) + 1;
        Py_ssize_t drop = kept > maxper ? kept - maxper : 0;
        PyObject *nb = PyBytes_FromStringAndSize(NULL, 8 * (kept - drop));
        if (nb == NULL) goto fail;
        unsigned char *o = (unsigned char *)PyBytes_AS_STRING(nb);
        Py_ssize_t pos = 0, seen = 0;
        for (Py_ssize_t k = 0; k < len; k++) {
            if (k == skip) continue;
            if (seen++ < drop) continue;
            memcpy(o + 8 * pos++, b + 8 * k, 8);
        }
        store64(o + 8 * pos, sh);
        PyList_SetItem(slots, i, nb); /* steals nb, releases the old slot */
    }
    Py_DECREF(seq);
    Py_RETURN_NONE;
fail:
    Py_DECREF(seq);
    return NULL;
}

static PyMethodDef methods[] = {
    {"dp", dp, METH_VARARGS, "Fill and trace the middle of the alignment matrix."},
    {"near", near, METH_VARARGS, "Simhashes within a distance in the given block slots."},
    {"add", add, METH_VARARGS, "Move or append a simhash to the end of the given block slots."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_kernels", NULL, -1, methods};

PyMODINIT_FUNC PyInit__kernels(void) { return PyModule_Create(&module); }
