class Circle:
    """A circle."""
    def area(self):
        return 3.14

def perimeter(r):
    """Perimeter of a circle."""
    return 6.28 * r

def _helper():
    pass
