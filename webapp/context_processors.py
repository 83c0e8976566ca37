from webapp.views import THEME_COLOURS


def theme_colours(request):
    """The browser's colour for the page's frame in each scheme (base.html's ``theme-color``), as the manifest's."""
    return {"theme_colours": THEME_COLOURS}
