"""Resource package: jinja2 templates for the files that end up inside pods."""
