/* The middle of the pairwise URL alignment (align.py: _dp_py), in C.
 *
 * Optional: align.py uses the pure-Python _dp_py when this did not build. Both fill the
 * same matrix with the same double arithmetic and walk the same traceback (diagonal,
 * then left, then up), so they return identical results (tests/test_align.py checks).
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

static PyMethodDef methods[] = {
    {"dp", dp, METH_VARARGS, "Fill and trace the middle of the alignment matrix."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_aligndp", NULL, -1, methods};

PyMODINIT_FUNC PyInit__aligndp(void) { return PyModule_Create(&module); }
