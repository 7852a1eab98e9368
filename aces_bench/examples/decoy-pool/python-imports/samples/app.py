import os, sys
import requests
from collections import Counter
from . import models
from yaml import safe_load
