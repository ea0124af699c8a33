import os, sys; sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import *

CCS = ['eq', 'ne', 'slt', 'sle', 'sgt', 'sge', 'ult', 'ule', 'ugt', 'uge']

def cmp(cc, x, y, b):
    sx, sy, ux, uy = s(x, b), s(y, b), u(x, b), u(y, b)
    return int({'eq': ux == uy, 'ne': ux != uy, 'slt': sx < sy, 'sle': sx <= sy, 'sgt': sx > sy,
                'sge': sx >= sy, 'ult': ux < uy, 'ule': ux <= uy, 'ugt': ux > uy, 'uge': ux >= uy}[cc])

